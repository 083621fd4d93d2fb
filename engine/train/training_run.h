// One training run of a prepared experiment: the loop, its measurements and its ending.
#pragma once

#include <torch/nn.h>
#include <torch/optim.h>

#include <atomic>
#include <chrono>
#include <memory>

#include "measure/memory_history.h"
#include "measure/memory_monitor.h"
#include "memory/allocation_tag.h"
#include "model/text_classifier.h"
#include "oomlab/common/errors.h"
#include "torch_utils/torch_compat.h"
#include "train/batching.h"
#include "train/data_parallel.h"
#include "train/grad_scaler.h"
#include "train/metric_buffer.h"
#include "train/prepared_experiment.h"

namespace oomlab::train {

// Some rank of a data-parallel run ran out of memory in this step: every rank applies the OOM
// policy together (training_run_parallel.cpp).
class OutOfMemoryOnRank : public Error {
public:
    using Error::Error;
};

// Bytes held with `tag` by every module together.
std::int64_t held_by_all_modules(const memory::ModuleLedger& ledger, memory::AllocationTag tag);

class TrainingRun {
public:
    TrainingRun(const PreparedExperiment& experiment, TrainObserver& observer,
                const std::atomic<bool>& cancel, bool worst_case_trial = false);
    ~TrainingRun();
    RunOutcome execute();

private:
    void train_epochs();
    void train_worst_case();
    void start_epoch(int epoch);
    bool optimizer_step();  // false at the end of the epoch
    int micro_batches(torch::Tensor& step_loss, std::int64_t& samples);
    // Data parallelism (training_run_parallel.cpp): micro_batches() on every rank, agreeing on
    // how it ended; the group's setup and the check that the ranks ended alike.
    int micro_batches_together(torch::Tensor& step_loss, std::int64_t& samples);
    // After each rank's share of an evaluation: `out_of_memory` is this rank's error, if its
    // share ran out; when any rank's did, every rank ends out of memory here.
    void evaluation_together(const std::optional<std::string>& out_of_memory);
    void start_data_parallel();
    void finish_data_parallel();
    void evaluate();  // training_run_evaluation.cpp
    void enter_phase(std::string_view phase, memory::AllocationTag tag);
    void sample_phase(std::string_view phase);
    void record_memory_row(std::int64_t step, std::string_view phase,
                           const memory::MemorySample& memory);
    bool recover_from_oom(const std::string& message);
    void record_oom(const std::string& message);
    void step_optimizer();
    void write_snapshot();
    void end_step(const torch::Tensor& step_loss, std::int64_t samples);
    void check_cancel() const;
    std::string divergence_message(std::int64_t step) const;
    MemoryBreakdown measure_breakdown() const;
    // Attribution of memory to the model's modules (training_run_attribution.cpp).
    void attribute_parameters();
    void retag_optimizer_state();
    void retag_gradients();
    std::vector<torch::Tensor> optimizer_state_for(const torch::Tensor& parameter) const;
    std::vector<ModuleMemory> measure_by_module() const;
    void sample_modules(std::string_view phase);
    void add_stage(std::string_view stage, std::int64_t allocated,
                   std::optional<std::int64_t> device_used);
    double elapsed_seconds() const;
    bool pinned() const;
    std::unique_ptr<compat::AutocastScope> autocast_scope() const;

    const PreparedExperiment& m_experiment;
    const ExperimentConfig& m_config;
    TrainObserver& m_observer;
    const std::atomic<bool>& m_cancel;
    std::chrono::steady_clock::time_point m_start;
    std::chrono::steady_clock::time_point m_last_step_end = m_start;
    memory::MemoryMonitor m_memory;
    MetricBuffer m_metrics;

    std::shared_ptr<model::TextClassifier> m_model;
    std::vector<torch::Tensor> m_trainable;
    std::unique_ptr<DataParallel> m_parallel;  // several processes only
    std::vector<torch::Tensor> m_updated;      // what the optimizer updates
    std::unique_ptr<torch::optim::Optimizer> m_optimizer;
    std::optional<GradScaler> m_scaler;                 // fp16 only
    std::unique_ptr<memory::MemoryHistory> m_history;   // debug.memory_snapshot only
    std::shared_ptr<const ResidentDataset> m_resident;  // eager loading only

    int m_batch_size;
    int m_accumulation;
    int m_epoch = 0;
    std::int64_t m_step = 0;
    std::int64_t m_total_steps = 0;
    std::string_view m_phase = "setup";
    std::vector<std::vector<std::int64_t>> m_plan;  // this epoch's micro-batches
    std::size_t m_cursor = 0;                       // first micro-batch of the step in progress
    std::unique_ptr<BatchSource> m_batches;
    std::int64_t m_largest_batch_bytes = 0;
    memory::MemorySample m_at_peak;  // the step sample of the highest step peak
    torch::Tensor m_leaked_loss;     // debug.keep_loss_graph: the classic mistake, on purpose
    std::optional<double> m_val_accuracy;
    memory::ModuleId m_loss_id;
    memory::ModuleId m_optimizer_id;
    std::vector<ModuleSample> m_module_samples;
    std::vector<MemoryStage> m_staircase;
    std::optional<memory::MemorySample> m_last_step;
    std::optional<Fragmentation> m_fragmentation;
    bool m_worst_case_trial;
};

}  // namespace oomlab::train
