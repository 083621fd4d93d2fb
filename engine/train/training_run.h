// One training run of a prepared experiment: the loop, its measurements and its ending.
//
// The run owns the loop; what it trains (TrainedModel), the micro-batches (BatchSchedule),
// the memory's record (MemoryLedger) and the bytes' modules (ModuleAttribution) are its
// collaborators, each owning its state.
#pragma once

#include <atomic>
#include <memory>

#include "batch_schedule.h"
#include "batching.h"
#include "memory_ledger.h"
#include "metric_buffer.h"
#include "module_attribution.h"
#include "oomlab/common/errors.h"
#include "oomlab/torch_utils/torch_compat.h"
#include "phase_times.h"
#include "prepared_experiment.h"
#include "run_clock.h"
#include "trained_model.h"

namespace oomlab::train {

// Some rank of a data-parallel run ran out of memory in this step: every rank applies the OOM
// policy together (training_run_parallel.cpp).
class OutOfMemoryOnRank : public Error {
public:
    using Error::Error;
};

struct EvaluationShare;

// Where the loop is: the epoch, the optimizer steps done, and the phase in progress.
struct RunPosition {
    int epoch = 0;
    std::int64_t step = 0;
    std::string_view phase = "setup";
};

class TrainingRun {
public:
    TrainingRun(const PreparedExperiment& experiment, TrainObserver& observer,
                const std::atomic<bool>& cancel, bool worst_case_trial = false);
    ~TrainingRun();
    RunOutcome execute();

private:
    const ExperimentConfig& config() const { return m_experiment.config; }
    void set_up();
    void build_model();
    void finish(RunOutcome& outcome);
    void train_epochs();
    void train_worst_case();
    void start_epoch(int epoch);
    bool optimizer_step();  // false at the end of the epoch
    int micro_batches(torch::Tensor& step_loss, std::int64_t& samples);
    torch::Tensor train_micro_batch(const Batch& batch);
    void step_optimizer();
    void end_step(const torch::Tensor& step_loss, std::int64_t samples);
    // Data parallelism (training_run_parallel.cpp): micro_batches() on every rank, agreeing on
    // how it ended; the group's setup and the check that the ranks ended alike.
    int micro_batches_together(torch::Tensor& step_loss, std::int64_t& samples);
    // After each rank's share of an evaluation: `out_of_memory` is this rank's error, if its
    // share ran out; when any rank's did, every rank ends out of memory here.
    void evaluation_together(const std::optional<std::string>& out_of_memory);
    void start_data_parallel();
    void finish_data_parallel();
    // The validation pass (training_run_evaluation.cpp).
    void evaluate();
    EvaluationShare evaluate_share();
    // OOM (training_run_oom.cpp): the policy's retry, and what the allocator said.
    bool recover_from_oom(const std::string& message);
    void record_oom(const std::string& message);
    void enter_phase(std::string_view phase, memory::AllocationTag tag);
    void sample_phase(std::string_view phase);
    void record_memory_row(std::int64_t step, std::string_view phase,
                           const memory::MemorySample& memory);
    std::unique_ptr<BatchSource> make_batch_source() const;
    void check_cancel() const;
    std::string divergence_message(std::int64_t step) const;
    bool pinned() const;
    std::unique_ptr<compat::AutocastScope> autocast_scope() const;

    const PreparedExperiment& m_experiment;
    TrainObserver& m_observer;
    const std::atomic<bool>& m_cancel;
    RunClock m_clock;
    PhaseTimes m_times;
    MemoryLedger m_memory;  // before what it measures, which goes first
    MetricBuffer m_metrics;
    TrainedModel m_trained;
    ModuleAttribution m_attribution{m_trained};
    std::shared_ptr<const ResidentDataset> m_resident;  // eager loading only
    BatchSchedule m_schedule;
    std::unique_ptr<BatchSource> m_batches;
    RunPosition m_position;
    torch::Tensor m_leaked_loss;  // debug.keep_loss_graph: the classic mistake, on purpose
    std::optional<double> m_val_accuracy;
    bool m_worst_case_trial;
};

}  // namespace oomlab::train
