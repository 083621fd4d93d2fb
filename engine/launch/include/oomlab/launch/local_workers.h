// N copies of a program on this machine, each one rank of a data-parallel run, with the
// environment torchrun would give them (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR=127.0.0.1,
// MASTER_PORT=a free port): `oomlab-cli run --nproc N`, and the worker jobs of worker_jobs.h.
#pragma once

#include <csignal>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace oomlab {

// SIGINT and SIGTERM: a stop, as a terminal (Ctrl+C) or a scheduler (a time limit) sends it.
sigset_t stop_signal_set();

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

// Whether every worker exited refusing its config (kExitBadInput), none killed.
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

}  // namespace oomlab
