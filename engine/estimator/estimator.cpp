// The estimator walks one training step phase by phase (forward, backward, optimizer step,
// evaluation, in step_phases) and sums what is alive in each; the peak is the largest phase,
// split by category here and by module in module_shares.cpp.
#include "oomlab/estimator/estimator.h"
#include "oomlab/prepare/batch_plan.h"

#include <algorithm>

#include "activation_model.h"
#include "library_workspaces.h"
#include "reserved_replay.h"
#include "step_phases.h"

namespace oomlab {
namespace {

void add_library_workspaces(const ExperimentConfig& config, MemoryEstimate& estimate) {
    estimate.library_workspaces = estimator::cuda_library_workspace_bytes(config);
    estimate.breakdown.activations += estimate.library_workspaces;
    for (ModuleMemory& module : estimate.by_module) {
        if (module.module == "other" && estimate.library_workspaces > 0) {
            module.activations = module.activations.value_or(0) + estimate.library_workspaces;
        }
    }
}

// Whether the run's tensors pass through a caching allocator: PyTorch's on CUDA, its model on
// the CPU when memory.alloc_conf is set. Otherwise what is reserved is what is allocated.
bool caching_allocator(const ExperimentConfig& config) {
    return config.on_cuda() || !config.memory.alloc_conf.empty();
}

// The allocator's model replays the steps without a cap for what it reserves, and under the
// cap for whether a request finds no room: the segments it opens, or the pieces its cache is
// left in, may not fit where the tensors alone would. A step is replayed at each length the
// run's longest micro-batch grows to, in order, as each may need a segment the cache lacks.
void add_reserved(const estimator::Step& step, const std::vector<int>& growth, int world_size,
                  MemoryEstimate& estimate) {
    if (step.zero2) {
        return;  // the replay knows one process's whole tensors, not a rank's share of them
    }
    std::vector<estimator::Step> steps;
    for (const int length : growth) {
        if (length < step.length) {
            steps.push_back(estimator::step_of(*step.config, *step.profile, world_size, length));
        }
    }
    steps.push_back(step);
    const estimator::ReservedReplay free_run =
        estimator::replay_reserved(steps, 0, estimate.library_workspaces);
    estimate.reserved_bytes = estimate.peak_bytes + free_run.cache_at_peak;
    estimate.reserved_peak_bytes = std::max(*estimate.reserved_bytes, free_run.reserved_peak);
    estimate.caching_allocator = caching_allocator(*step.config);
    if (!estimate.caching_allocator) {
        return;
    }
    estimate.breakdown.allocator_cache = free_run.cache_at_peak;
    if (estimate.cap_bytes > 0 && estimate.peak_bytes <= estimate.cap_bytes &&
        free_run.reserved_peak > estimate.cap_bytes) {
        estimate.allocator_out_of_memory =
            estimator::replay_reserved(steps, estimate.cap_bytes, estimate.library_workspaces)
                .out_of_memory;
    }
}

}  // namespace

namespace {

// The estimate of a step whose longest micro-batch is padded to `length` tokens; what the
// allocator reserves only where `growth` lists the lengths the run's longest micro-batch grows
// through to `length` (an estimate only its peak is read from needs no replay).
MemoryEstimate estimate_with_length(const ExperimentConfig& config, const DataProfile& profile,
                                    int world_size, int length, const std::vector<int>& growth) {
    const estimator::Step step = estimator::step_of(config, profile, world_size, length);
    MemoryEstimate estimate;
    estimate.worst_batch_length = step.length;
    estimate.every_batch_worst = config.train.padding == Padding::Fixed;
    MemoryBreakdown& b = estimate.breakdown;
    const std::int64_t resident = estimator::add_resident(step, b);

    const estimator::Peak peak = estimator::peak_of(step);
    b.gradients = peak.bytes.gradients;
    b.activations = peak.bytes.other;
    // ZeRO-3's gathered parameters: the part running, or all of them in evaluation.
    if (peak.kind == estimator::PhaseKind::Evaluation) {
        const std::int64_t others = step.zero3 ? step.others : 0;
        b.parameters += others;
        b.embedding_table += peak.bytes.gathered - others;
    } else {
        (peak.gathered_part == "embeddings" ? b.embedding_table : b.parameters) +=
            peak.bytes.gathered;
    }
    estimate.by_module = estimator::attribute_by_module(step, peak);
    add_library_workspaces(config, estimate);
    estimate.host_bytes = step.host_bytes;
    b.other = estimator::cuda_outside_allocator_bytes(config, world_size);

    estimate.peak_bytes = resident + peak.bytes.total() + estimate.library_workspaces;
    estimate.cap_bytes = config.memory.cap_bytes();
    if (!growth.empty()) {
        add_reserved(step, growth, world_size, estimate);
    }
    estimate.fits = estimate.cap_bytes == 0 || (estimate.peak_bytes <= estimate.cap_bytes &&
                                                !estimate.allocator_out_of_memory);
    return estimate;
}

}  // namespace

MemoryEstimate estimate_memory(const ExperimentConfig& config, const DataProfile& profile,
                               int world_size, BatchesAssumed assumed) {
    const int worst = estimator::worst_length(config, profile);
    int length = worst;
    std::vector<int> growth = {worst};
    if (assumed == BatchesAssumed::ThisRun && !profile.lengths.empty()) {
        // The data order is seeded: the batches the run draws are known before it runs.
        const prepare::RunBatches batches =
            prepare::run_batches(config, profile.lengths, world_size);
        length = std::min(worst, batches.longest);
        growth = batches.growth;
    }
    MemoryEstimate estimate = estimate_with_length(config, profile, world_size, length, growth);
    estimate.assumed = assumed;
    estimate.epoch_worst_length = worst;
    estimate.epoch_worst_peak_bytes = length == worst
                                          ? estimate.peak_bytes
                                          : estimate_with_length(config, profile, world_size, worst,
                                                                 /*growth=*/{})
                                                .peak_bytes;
    return estimate;
}

EmbeddingTableCost embedding_table_cost(const ExperimentConfig& config, std::int64_t rows,
                                        int dim) {
    EmbeddingTableCost cost;
    cost.weights = rows * dim * estimator::element_bytes(config.embeddings.dtype);
    if (config.embeddings.dtype == DType::Int8) {
        cost.weights += rows * std::int64_t(sizeof(float));  // a scale per row
    }
    if (config.embeddings.trainable) {
        cost.gradient = config.embeddings.sparse_grad ? 0 : cost.weights;
        cost.optimizer_state = optimizer_state_copies(config.train.optimizer) * cost.weights;
    }
    return cost;
}

std::int64_t parameters_besides_table(const ExperimentConfig& config, int embedding_dim,
                                      int num_classes) {
    return memory::non_embedding_parameters(config, embedding_dim, num_classes);
}

std::int64_t optimizer_state_copies(OptimizerKind optimizer) {
    switch (optimizer) {
        case OptimizerKind::Sgd:
            return 0;
        case OptimizerKind::Momentum:
        case OptimizerKind::Adagrad:
            return 1;
        case OptimizerKind::Adam:
        case OptimizerKind::AdamW:
            return 2;
    }
    return 0;
}

MemoryPrediction to_prediction(const MemoryEstimate& estimate) {
    return {estimate.peak_bytes, estimate.breakdown, estimate.by_module,
            estimate.worst_batch_length, estimate.every_batch_worst};
}

}  // namespace oomlab
