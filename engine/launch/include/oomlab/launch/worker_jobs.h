// Front ends that live in one process (the workbench, lessons) hand a data-parallel run or a
// batch-size search to worker processes. A job is a temporary folder holding the config and
// the task (oomlab-workers-PID-XXXXXX, removed with the job, or by the next job when the
// launcher was killed); each worker is the front end's worker program given that folder, one
// rank, which calls the engine's own entry point (session/worker_entry.h). The launcher learns
// the outcome from the workers' reports (worker_report.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "oomlab/config/experiment_config.h"
#include "oomlab/run/batch_search.h"

namespace oomlab {

// The program a worker is: `path arguments... FOLDER`, which hands FOLDER to run_worker_task.
// The front end names it at start-up (the engine knows no program of its own); without one,
// a job throws Error.
struct WorkerProgram {
    std::string path;
    std::vector<std::string> arguments;
};
void set_worker_program(WorkerProgram program);

// What a job asks of each of its workers.
struct WorkerTask {
    enum class Kind { Run, FindBatchSize };
    Kind kind = Kind::Run;
    std::string config_file;  // the experiment, in the job's folder
    std::string db_path;      // Run: the database the run is recorded into
    std::string run_name;     // Run
};

// Worker side: the task of the job in `folder`. Throws BadInput naming the file when the
// folder holds no job.
WorkerTask read_worker_task(const std::string& folder);

// Trains `config` as one data-parallel run of `processes` workers, recorded into the database
// at `db_path` under `name`; returns its id. `tick` is called about every 20 ms with the run's
// id once rank 0 has created it (0 before), the run rank 0 reports, never another one written
// to the same database meanwhile. Throws when no run was recorded: BadInput with the workers'
// message and keys when they refused the config (as Experiment::prepare's BadInput in this
// process), otherwise Error with what they reported.
// `step_pause_ms`, when given, is asked as often as `tick` is called: how long every worker
// pauses after each optimizer step (a pace a class can follow; 0: full speed). A change reaches
// the workers within a step or two.
std::int64_t run_with_local_workers(const ExperimentConfig& config, const std::string& name,
                                    const std::string& db_path, int processes,
                                    const std::atomic<bool>& cancel,
                                    const std::function<void(std::int64_t run_id)>& tick = {},
                                    const std::function<int()>& step_pause_ms = {});

// Worker side: the pause after each step the launcher of the job in `folder` asks for now
// (0 when it asks for none, or the folder holds none).
int read_step_pause_ms(const std::string& folder);

// find_batch_size for a data-parallel run of `processes` workers: every trial trains every
// rank, and a batch fits when it fits on all of them. `on_trial` is called on this thread for
// each trial as rank 0 reports it. Throws as run_with_local_workers does when the workers give
// no answer (also when `cancel` stopped them).
BatchSizeSearch find_batch_size_with_local_workers(
    const ExperimentConfig& config, int processes, const std::atomic<bool>& cancel,
    const std::function<void(const BatchTrial&)>& on_trial = {});

}  // namespace oomlab
