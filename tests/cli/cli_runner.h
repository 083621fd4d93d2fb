// Runs the real oomlab-cli binary and captures what it prints.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace oomlab::test {

struct CliResult {
    int exit_code = -1;
    std::string out;
    std::string err;
    std::vector<std::string> lines() const;  // of `out`
};

// The Python with PyTorch 2.x that the tests of real PyTorch programs run
// ($OOMLAB_TORCH_PYTHON, which ./oomlab.sh cuda-test sets); empty without it.
std::string torch_python();

// `environment`: extra "NAME=VALUE" settings for the process.
CliResult run_cli(const std::vector<std::string>& arguments,
                  const std::vector<std::string>& environment = {});

// `runs show ID --db DB --json`, parsed; a failure to show it is a test failure.
nlohmann::json show_run_json(const std::string& db, std::int64_t run);

// Waits for `pid` (a child of this process) to exit, up to `limit`; its wait status, or -1
// when it had to be killed.
int wait_exit(pid_t pid, std::chrono::seconds limit);

}  // namespace oomlab::test
