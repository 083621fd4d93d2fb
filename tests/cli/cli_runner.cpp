#include "cli_runner.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>

#include <cstdlib>
#include <sstream>
#include <thread>

#include "test_support.h"

namespace oomlab::test {

std::string torch_python() {
    const char* python = std::getenv("OOMLAB_TORCH_PYTHON");
    return python && *python ? python : "";
}

std::vector<std::string> CliResult::lines() const {
    std::vector<std::string> result;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) {
        result.push_back(line);
    }
    return result;
}

CliResult run_cli(const std::vector<std::string>& arguments,
                  const std::vector<std::string>& environment) {
    TempDir scratch;
    // No case may hang: a stuck binary is killed and reported as exit 124.
    std::string command = "timeout 300 env";
    for (const auto& setting : environment) {
        command += " " + shell_quote(setting);
    }
    command += " " + shell_quote(test::cli_program());
    for (const auto& argument : arguments) {
        command += " " + shell_quote(argument);
    }
    command += " 2>" + shell_quote(scratch.file("stderr")) + " </dev/null";
    const CommandResult ran = run_command(command);
    CliResult result;
    result.exit_code = ran.exit_code;
    result.out = ran.out;
    result.err = read_text(scratch.file("stderr"));
    return result;
}

nlohmann::json show_run_json(const std::string& db, std::int64_t run) {
    const CliResult shown = run_cli({"runs", "show", std::to_string(run), "--db", db, "--json"});
    EXPECT_EQ(shown.exit_code, 0) << shown.err;
    return nlohmann::json::parse(shown.out);
}

int wait_exit(pid_t pid, std::chrono::seconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
        int status = 0;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            return status;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    return -1;
}

}  // namespace oomlab::test
