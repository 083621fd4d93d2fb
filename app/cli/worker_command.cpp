// oomlab-cli worker FOLDER: one rank of a job a front end handed to worker processes. Not
// for people (hidden from --help): front ends start it (this program for its lessons, the
// workbench the oomlab-cli beside it) and the engine does the work.
#include "cli_context.h"
#include "oomlab/common/errors.h"
#include "oomlab/launch/worker_jobs.h"
#include "oomlab/session/worker_entry.h"

namespace oomlab::cli {

namespace {
constexpr const char* kWorkerCommand = "worker";
}  // namespace

void add_worker_command(CLI::App& app, int& exit_code) {
    set_worker_program({this_program(), {kWorkerCommand}});
    auto* command = app.add_subcommand(kWorkerCommand, "One rank of a worker job");
    command->group("");  // hidden
    auto folder = std::make_shared<std::string>();
    command->add_option("FOLDER", *folder, "The job's folder")->required();
    command->callback([=, &exit_code] {
        // A run stops at its next step and saves what it measured; a search has nothing to
        // save, and Ctrl+C (the launcher's stop) ends it at once, as it ends `find-batch-size`.
        bool run = false;
        try {
            run = read_worker_task(*folder).kind == WorkerTask::Kind::Run;
        } catch (const BadInput&) {
            // run_worker_task refuses the folder and reports why to the launcher.
        }
        if (run) {
            const StopOnSignals stop;
            exit_code = run_worker_task(*folder, stop.requested());
        } else {
            const std::atomic<bool> never{false};
            exit_code = run_worker_task(*folder, never);
        }
    });
}

}  // namespace oomlab::cli
