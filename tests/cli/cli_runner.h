// Runs the real oomlab-cli binary and captures what it prints.
#pragma once

#include <string>
#include <vector>

namespace oomlab::test {

struct CliResult {
    int exit_code = -1;
    std::string out;
    std::string err;
    std::vector<std::string> lines() const;  // of `out`
};

// `environment`: extra "NAME=VALUE" settings for the process.
CliResult run_cli(const std::vector<std::string>& arguments,
                  const std::vector<std::string>& environment = {});

}  // namespace oomlab::test
