// oomlab-cli: the engine without a window, for GPU servers, scripts and CI.
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <iostream>

#include "cli_context.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/version.h"
#include "oomlab/session/engine_server.h"
#include "oomlab/session/experiment.h"

namespace {

using namespace oomlab::cli;
using oomlab::kExitBadInput, oomlab::kExitFailure, oomlab::kExitOk, oomlab::kExitOutOfMemory;

// "oomlab-cli frobnicate" names the command it did not find and lists the ones there are
// (CLI11 alone would only say that a subcommand is required).
void check_command_names(CLI::App& app, int argc, char** argv) {
    CLI::App* current = &app;
    for (int i = 1; i < argc && argv[i][0] != '-'; ++i) {
        const std::string name = argv[i];
        const auto found = current->get_subcommands(
            [&](const CLI::App* command) { return command->get_name() == name; });
        if (!found.empty()) {
            current = found.front();
            continue;
        }
        if (current->get_require_subcommand_min() == 0) {
            return;  // a positional argument of the command
        }
        std::string known;
        for (const CLI::App* command : current->get_subcommands({})) {
            if (!command->get_group().empty()) {  // not the hidden worker command
                known += (known.empty() ? "" : ", ") + command->get_name();
            }
        }
        const std::string where = current == &app ? "" : " " + current->get_name();
        throw oomlab::BadInput("unknown command \"" + name + "\"; the commands of oomlab-cli" +
                               where + " are: " + known + " (see --help)");
    }
}

// Output that could not be written: a reader that went away (`| head -2`) is not an error of
// the command, a full disk behind a redirection is.
int check_standard_output(int exit_code) {
    std::cout.flush();
    if (std::cout.good() && std::fflush(stdout) == 0 && !std::ferror(stdout)) {
        return exit_code;
    }
    struct stat info {};
    if (fstat(STDOUT_FILENO, &info) == 0 && (S_ISFIFO(info.st_mode) || S_ISSOCK(info.st_mode))) {
        return exit_code;  // the work is done and saved; only its report had no reader
    }
    std::cerr << "error: cannot write the output to standard output (is the disk full?)\n";
    return kExitFailure;
}

int run_command_line(int argc, char** argv) {
    // A closed pipe becomes a failed write, checked at the end, instead of killing a run.
    std::signal(SIGPIPE, SIG_IGN);
    set_command_line(argc, argv);
    CLI::App app{
        "OOM Lab: train text classifiers on GloVe embeddings and see where the memory "
        "goes.",
        "oomlab-cli"};
    app.set_version_flag(
        "--version", "oomlab-cli " + oomlab::engine_version() + " (" + oomlab::torch_build() + ")");
    app.require_subcommand(1);
    int exit_code = kExitOk;
    add_run_command(app, exit_code);
    add_estimate_command(app, exit_code);
    add_find_batch_size_command(app, exit_code);
    add_sweep_command(app, exit_code);
    add_lesson_command(app, exit_code);
    add_runs_command(app, exit_code);
    add_glove_command(app, exit_code);
    add_device_command(app, exit_code);
    add_explain_command(app, exit_code);
    add_snapshot_command(app, exit_code);
    add_mcp_command(app, exit_code);
    add_record_command(app, exit_code);
    add_config_command(app, exit_code);
    add_worker_command(app, exit_code);
    try {
        check_command_names(app, argc, argv);
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& help) {
        return app.exit(help);
    } catch (const CLI::CallForAllHelp& help) {
        return app.exit(help);
    } catch (const CLI::CallForVersion& version) {
        return app.exit(version);
    } catch (const CLI::ParseError& error) {
        app.exit(error);
        return kExitBadInput;
    } catch (const oomlab::BadInput& error) {
        std::cerr << "error: " << error.what() << '\n';
        return kExitBadInput;
    } catch (const oomlab::Cancelled&) {
        std::cerr << "stopped (SIGINT or SIGTERM) before the run began: nothing was recorded\n";
        return oomlab::kExitInterrupted;
    } catch (const oomlab::OutOfMemory& error) {
        std::cerr << "error: " << error.what() << '\n';
        return kExitOutOfMemory;
    } catch (const std::exception& error) {
        std::cerr << "error: " << error.what() << '\n';
        return kExitFailure;
    }
    return check_standard_output(exit_code);
}

}  // namespace

// `oomlab-cli engine-server FOLDER` (hidden) serves copies of this program that have loaded
// the training engine (oomlab/session/engine_server.h).
int main(int argc, char** argv) {
    return oomlab::session::run_main(argc, argv, run_command_line);
}
