// Shared pieces of the oomlab-cli subcommands.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "oomlab/common/format.h"  // format_bytes, for every subcommand
#include "oomlab/config/experiment_config.h"

namespace oomlab::cli {

// Exit codes of the command line contract.
enum ExitCode : int {
    kExitOk = 0,
    kExitFailure = 1,
    kExitBadInput = 2,
    kExitOutOfMemory = 3,
    kExitInterrupted = 130,
};

// --config FILE and --set KEY=VALUE, shared by every command that takes an experiment.
struct ConfigOptions {
    std::string config_file;
    std::vector<std::string> overrides;

    void add_to(CLI::App& command);
    ExperimentConfig build() const;  // throws BadInput naming the file or key
};

std::string default_db_path();

// Each registers a subcommand whose callback sets `exit_code`.
void add_run_command(CLI::App& app, int& exit_code);
void add_runs_command(CLI::App& app, int& exit_code);
void add_glove_command(CLI::App& app, int& exit_code);
void add_device_command(CLI::App& app, int& exit_code);
void add_config_command(CLI::App& app, int& exit_code);
void add_estimate_command(CLI::App& app, int& exit_code);
void add_find_batch_size_command(CLI::App& app, int& exit_code);
void add_sweep_command(CLI::App& app, int& exit_code);
void add_lesson_command(CLI::App& app, int& exit_code);

}  // namespace oomlab::cli
