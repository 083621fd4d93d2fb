#include "cli_runner.h"

#include <sys/wait.h>

#include <cstdio>
#include <sstream>

#include "test_support.h"

namespace oomlab::test {
namespace {

std::string quoted(const std::string& text) {
    std::string result = "'";
    for (char c : text) {
        result += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return result + "'";
}

}  // namespace

std::vector<std::string> CliResult::lines() const {
    std::vector<std::string> result;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) {
        result.push_back(line);
    }
    return result;
}

CliResult run_cli(const std::vector<std::string>& arguments) {
    TempDir scratch;
    // No case may hang: a stuck binary is killed and reported as exit 124.
    std::string command = "timeout 300 " + quoted(OOMLAB_CLI_PATH);
    for (const auto& argument : arguments) {
        command += " " + quoted(argument);
    }
    command += " 2>" + quoted(scratch.file("stderr")) + " </dev/null";
    CliResult result;
    FILE* pipe = popen(command.c_str(), "r");
    char buffer[4096];
    while (std::size_t count = std::fread(buffer, 1, sizeof buffer, pipe)) {
        result.out.append(buffer, count);
    }
    const int status = pclose(pipe);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    FILE* err = std::fopen(scratch.file("stderr").c_str(), "r");
    while (std::size_t count = std::fread(buffer, 1, sizeof buffer, err)) {
        result.err.append(buffer, count);
    }
    std::fclose(err);
    return result;
}

}  // namespace oomlab::test
