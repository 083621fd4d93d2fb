// `oomlab-cli run --nproc N`: N copies of a program on this machine, each one rank of a
// data-parallel run, with the environment torchrun would give them (RANK, WORLD_SIZE,
// LOCAL_RANK, MASTER_ADDR=127.0.0.1, MASTER_PORT=a free port).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "oomlab/config/experiment_config.h"
#include "oomlab/session/batch_size_search.h"

namespace oomlab {

struct LocalWorkers {
    std::string program;                 // an executable path
    std::vector<std::string> arguments;  // after the program name
    int count = 2;
    // How long the others may take to end after one failed: their collectives end within
    // distributed.timeout_s; after this they are killed.
    std::chrono::seconds grace{90};
    bool quiet = false;  // the workers' standard output goes to /dev/null
    // Where the workers write their reports (OOMLAB_WORKER_REPORT); empty: they write none.
    std::string report_folder;
};

struct WorkerExit {
    int rank = 0;
    int pid = 0;
    int exit_code = 0;  // when it exited
    int signal = 0;     // when a signal ended it (0: it exited)
    bool killed_by_launcher = false;
    std::string errors;  // what it wrote to standard error (its last 64 KiB)

    bool succeeded() const { return signal == 0 && exit_code == 0; }
    std::string describe() const;  // "rank 1 (pid 123) was killed by signal 9 (Killed)"
};

// Whether every worker exited refusing its config (oomlab-cli's exit code 2), none killed.
bool every_worker_refused(const std::vector<WorkerExit>& exits);

// The lines the workers wrote to standard error, in rank order, each line once: the ranks of
// one run mostly fail alike (every rank checks the same config).
std::vector<std::string> distinct_error_lines(const std::vector<WorkerExit>& exits);

// Starts the workers and waits for every one of them; each one's standard error is kept
// (WorkerExit::errors) rather than shown, so one failure is reported once, not once per rank. While
// `stop` is set, SIGINT is passed on once (each worker then stops at its next step). No worker
// outlives this call: each dies with its parent (PR_SET_PDEATHSIG), and ones still alive after
// `grace` past the first failure are killed. Throws Error when a worker cannot be started. `tick`,
// when given, is called about every 20 ms while they run (on this thread).
std::vector<WorkerExit> run_local_workers(const LocalWorkers& workers,
                                          const std::atomic<bool>& stop,
                                          const std::function<void()>& tick = {});

// A TCP port on 127.0.0.1 free at the time of the call, below the range the kernel picks
// outgoing connections' ports from where it can, so that none takes it before rank 0 binds it.
int free_loopback_port();

// Trains `config` as one data-parallel run of `processes` workers of the oomlab-cli beside
// this program, recorded into the database at `db_path` under `name`; returns its id. For
// front ends that run in one process (lessons, the workbench). `tick` is called about every
// 20 ms with the run's id once rank 0 has created it (0 before), the run rank 0 reports, never
// another one written to the same database meanwhile. Throws when no run was recorded:
// BadInput with the workers' message and keys when they refused the config (exit code 2, as
// Experiment::prepare's BadInput in this process), otherwise Error with what they reported.
std::int64_t run_with_local_workers(const ExperimentConfig& config, const std::string& name,
                                    const std::string& db_path, int processes,
                                    const std::atomic<bool>& cancel,
                                    const std::function<void(std::int64_t run_id)>& tick = {});

// find_batch_size for a data-parallel run of `processes` workers of the oomlab-cli beside this
// program: every trial trains every rank, and a batch fits when it fits on all of them.
// `on_trial` is called on this thread for each trial as rank 0 reports it. Throws as
// run_with_local_workers does when the workers give no answer (also when `cancel` stopped them).
BatchSizeSearch find_batch_size_with_local_workers(
    const ExperimentConfig& config, int processes, const std::atomic<bool>& cancel,
    const std::function<void(const BatchTrial&)>& on_trial = {});

}  // namespace oomlab
