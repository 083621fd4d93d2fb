// oomlab-cli: the engine without a window, for GPU servers, scripts and CI.
#include <iostream>

#include "cli_context.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/version.h"
#include "oomlab/session/experiment.h"

int main(int argc, char** argv) {
    using namespace oomlab::cli;
    CLI::App app{
        "OOM Lab: train text classifiers on GloVe embeddings and see where the memory "
        "goes.",
        "oomlab-cli"};
    app.set_version_flag("--version", "oomlab-cli " + oomlab::engine_version() + " (LibTorch " +
                                          oomlab::torch_version() + ")");
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
    add_config_command(app, exit_code);
    try {
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
    } catch (const oomlab::OutOfMemory& error) {
        std::cerr << "error: " << error.what() << '\n';
        return kExitOutOfMemory;
    } catch (const std::exception& error) {
        std::cerr << "error: " << error.what() << '\n';
        return kExitFailure;
    }
    return exit_code;
}
