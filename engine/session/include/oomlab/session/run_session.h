// A recorded run: prepare the experiment, create the run in the store, train, write every
// metric batch and event, finish the run. The CLI and the GUI's worker both use this.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "oomlab/advice/oom_fixes.h"
#include "oomlab/session/experiment.h"
#include "oomlab/store/run_store.h"

namespace oomlab {

class RunListener : public TrainObserver {
public:
    virtual void on_prepare(const std::string& /*stage*/, double /*fraction*/) {}
    virtual void on_run_created(std::int64_t /*run_id*/, const ExperimentInfo& /*info*/) {}
    // The pause after each optimizer step the front end asks for (a pace a class can
    // follow; kHeldMs while it holds the run, Pause), asked again while the run waits, so a
    // change (Resume, Step) ends the wait at once; 0: full speed. The run pauses itself, in
    // this process or in each worker process (run_with_workers_and_record), and a stop ends
    // the pause.
    static constexpr int kHeldMs = 1 << 30;
    virtual int step_pause_ms() const { return 0; }
    bool pauses_between_steps() const override { return step_pause_ms() > 0; }
};

struct RunResult {
    std::int64_t run_id = 0;
    ExperimentInfo info;
    RunOutcome outcome;
    std::vector<OomFix> fixes;  // for a run that ran out of memory: what to change
};

// Throws BadInput (before any run exists) for invalid settings or unreadable inputs. After
// the run is created nothing is thrown for training failures: they end the run with its
// status and error, and every metric written before stays in the store.
//
// With a `rendezvous` this process is one rank of a data-parallel run: rank 0 creates and
// finishes the run's row, every rank writes its own metric rows (MetricRow::rank) and memory.
RunResult run_and_record(const ExperimentConfig& config, const std::string& name, RunStore& store,
                         RunListener& listener, const std::atomic<bool>& cancel,
                         const std::optional<Rendezvous>& rendezvous = std::nullopt);

// The same run trained by `processes` local oomlab-cli workers, one rank each (see
// local_workers.h), for front ends that live in one process (the workbench, lessons): what
// the workers write is read back from `store` as it arrives and reported to `listener` as
// run_and_record reports a run of this process, with the same fixes for an OOM. Throws
// BadInput when the workers refused the config, Error when no run was recorded otherwise.
RunResult run_with_workers_and_record(const ExperimentConfig& config, const std::string& name,
                                      RunStore& store, RunListener& listener,
                                      const std::atomic<bool>& cancel, int processes);

// What to change after a run ran out of memory: suggest_oom_fixes for its data (`profile`, as
// its preparation read it: the data is not read again), device and processes;
// `device_total_bytes` from its metric rows; `outcome` the run's, with its free space.
std::vector<OomFix> fixes_for(const ExperimentConfig& config, const DataProfile& profile,
                              const std::string& device, std::int64_t device_total_bytes,
                              int world_size, const RunOutcome& outcome);

// A default run name from the data and the settings that matter most
// ("trec.train bag b32 fp32 adam").
std::string default_run_name(const ExperimentConfig& config);

// The dataset as a short name: the file's or folder's name without extension, or
// "fortunes" for the embedded default.
std::string dataset_name(const ExperimentConfig& config);

}  // namespace oomlab
