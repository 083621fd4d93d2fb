// --nproc N: this command line again in N local workers, each one rank of a data-parallel group.
#include <signal.h>

#include <algorithm>
#include <iostream>

#include "cli_context.h"
#include "oomlab/common/errors.h"
#include "oomlab/launch/local_workers.h"
#include "oomlab/launch/rendezvous.h"

namespace oomlab::cli {
namespace {

// This command line without --nproc: what each worker runs.
std::vector<std::string> worker_arguments() {
    std::vector<std::string> arguments;
    const std::vector<std::string>& line = command_line();
    for (std::size_t i = 1; i < line.size(); ++i) {
        if (line[i] == "--nproc") {
            ++i;  // and its value
        } else if (line[i].rfind("--nproc=", 0) != 0) {
            arguments.push_back(line[i]);
        }
    }
    return arguments;
}

}  // namespace

int run_local_ranks(int count, const ExperimentConfig& config, WorkerExit* rank0) {
    if (rendezvous_from_environment()) {
        throw BadInput(
            "--nproc: this process is already one rank of a data-parallel run "
            "(WORLD_SIZE is set); leave out --nproc or unset the variables",
            {"--nproc"});
    }
    LocalWorkers workers;
    workers.program = this_program();
    workers.arguments = worker_arguments();
    workers.count = count;
    workers.grace = std::chrono::seconds(config.distributed.timeout_s + 30);
    std::vector<WorkerExit> exits;
    bool stopped = false;
    {
        const StopOnSignals stop;
        exits = run_local_workers(workers, stop.requested());
        stopped = stop.requested().load();
    }
    if (rank0 && !exits.empty()) {
        *rank0 = exits.front();
    }
    for (const std::string& line : distinct_error_lines(exits)) {
        std::cerr << line << '\n';
    }
    if (every_worker_refused(exits)) {
        return kExitBadInput;  // every rank refused the config, and said why above
    }
    // Stopped by Ctrl+C or SIGTERM, passed on once: a run saves itself and exits 130; a search
    // has nothing to save and ends by that SIGINT.
    const auto ended_by_the_stop = [](const WorkerExit& exit) {
        return exit.succeeded() || (exit.signal == 0 && exit.exit_code == kExitInterrupted) ||
               (exit.signal == SIGINT && !exit.killed_by_launcher);
    };
    if (stopped && std::all_of(exits.begin(), exits.end(), ended_by_the_stop)) {
        return kExitInterrupted;
    }
    int exit_code = kExitOk;
    for (const WorkerExit& exit : exits) {
        if (exit.succeeded()) {
            continue;
        }
        // A rank that ended as a run ends (out of memory or refused: rank 0's summary says so,
        // stopped) or said why above needs no second line; a signal, or silence, does.
        const bool said = exit.signal == 0 &&
                          (exit.exit_code == kExitOutOfMemory || exit.exit_code == kExitBadInput ||
                           exit.exit_code == kExitInterrupted || !exit.errors.empty());
        if (!said) {
            std::cerr << "error: " << exit.describe() << '\n';
        }
        if (exit_code == kExitOk) {
            exit_code = exit.signal == 0 ? exit.exit_code : kExitFailure;
        }
    }
    if (!exits.empty() && !exits.front().succeeded() && exits.front().signal == 0) {
        exit_code = exits.front().exit_code;  // rank 0 says how it ended
    }
    return exit_code;
}

}  // namespace oomlab::cli
