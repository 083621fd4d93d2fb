// The step's shape and its phases: forward, backward (at its start or its end), the
// optimizer's update and evaluation, each with the gradients, temporaries and (ZeRO-3)
// gathered parameters alive then.
#include "step_phases.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "oomlab/estimator/estimator.h"
#include "oomlab/prepare/batch_plan.h"

namespace oomlab::estimator {
namespace {

constexpr std::int64_t kIndex = 8;
// The batch in use, those ready ahead, and one being built.
constexpr std::int64_t kStreamingBatchesInFlight = 1 + kStreamingBatchesAhead + 1;

}  // namespace

int worst_length(const ExperimentConfig& config, const DataProfile& profile) {
    return config.train.padding == Padding::Fixed ? config.train.max_len
                                                  : std::max(1, profile.longest);
}

namespace {

// The padded length of a typical batch: the expected longest of `batch` random examples
// (dynamic), about the mean (bucket), or max_len (fixed).
int typical_length(const ExperimentConfig& config, const DataProfile& profile, int batch) {
    if (config.train.padding == Padding::Fixed || profile.lengths.empty()) {
        return worst_length(config, profile);
    }
    std::vector<int> sorted = profile.lengths;
    std::sort(sorted.begin(), sorted.end());
    const double quantile =
        config.train.padding == Padding::Bucket ? 0.5 : double(batch) / (batch + 1);
    return sorted[std::min(sorted.size() - 1, std::size_t(quantile * sorted.size()))];
}

}  // namespace

std::int64_t optimizer_temporaries(OptimizerKind optimizer) {
    switch (optimizer) {
        case OptimizerKind::Adam:
        case OptimizerKind::AdamW:
            return 2;
        case OptimizerKind::Adagrad:
            return 1;
        default:
            return 0;
    }
}

namespace {

// Activations the loss graphs of every step keep (debug.keep_loss_graph): the last step
// holds all of them.
std::int64_t kept_graphs(const Step& s) {
    const ExperimentConfig& config = *s.config;
    const std::int64_t steps = std::max<std::int64_t>(
        1, config.train.max_steps > 0
               ? config.train.max_steps
               : config.train.epochs * ((s.profile->train_examples + s.batch - 1) / s.batch) /
                     config.train.accumulation);
    const memory::ActivationBytes typical =
        memory::estimate_activations(config, s.dim, s.profile->num_classes,
                                     {s.batch, typical_length(config, *s.profile, s.batch)});
    return (steps * config.train.accumulation - 1) * typical.saved;
}

// Forward peaks in the module that makes the widest temporary: the later modules have saved
// nothing yet.
Phase forward_phase(const Step& s) {
    return {s.earlier_grads,
            s.kept_beside + memory::total_bytes(s.act.at_forward_peak) + s.act.forward_transient,
            s.gathered_in(s.act.forward_transient_in, false)};
}

// Backward peaks where it starts (every saved tensor alive) or where it ends (every gradient
// alive, the saved tensors freed).
struct Backward {
    Phase start;
    Phase end;
    bool peaks_at_end() const { return end.total() > start.total(); }
};

Backward backward_phases(const Step& s) {
    // ZeRO-2 moves each gradient into its bucket as it is accumulated and sums a bucket once
    // full, keeping its range of the sums. At the end of backward: the range, and the largest
    // gradient alone or being copied into its bucket beside it (the range exists once an
    // earlier bucket was summed).
    const std::int64_t bucket_limit = std::int64_t{s.config->distributed.bucket_mb} << 20;
    const std::int64_t zero2_waiting =
        s.largest_alone ? s.share(s.gradients) + std::min(s.gradients, s.largest_gradient)
                        : s.shared_bucket + s.largest_gradient +
                              (s.gradients > bucket_limit ? s.share(s.gradients) : 0);
    // ZeRO-2 allocates its first bucket at the first gradient, while the saved tensors are
    // still alive. Without accumulation, only the gradients backward has finished are alive,
    // and the one it computes (with ZeRO-2 the finished ones have moved into their bucket).
    const std::int64_t zero2_at_start = s.zero2 ? s.shared_bucket : 0;
    std::int64_t first_gradients = s.in_progress;
    for (const memory::ModuleBytes& part : s.weights) {
        first_gradients +=
            !s.accumulating && !s.zero2 && s.gradient_done(part.module) ? part.bytes * kFloat : 0;
    }
    const memory::ActivationBytes& act = s.act;
    return {{s.earlier_grads + zero2_at_start + first_gradients,
             s.kept_beside + memory::total_bytes(act.at_backward_start) + act.backward_transient,
             s.gathered_in(act.backward_starts_in, true)},
            {(s.zero2 ? zero2_waiting : s.gradients) + s.grad_sum_copy, act.backward_end_transient,
             s.gathered_in(act.backward_ends_in, true)}};
}

// The update: the gradients kept, and the larger of the update's temporaries and (without
// ZeRO-2) the bucket the gradients are summed in across ranks.
Phase optimizer_phase(const Step& s) {
    const bool trainable_table = s.config->embeddings.trainable;
    const std::int64_t largest_parameter =
        std::min(s.updated, trainable_table ? std::max(s.table, s.others / 2) : s.others / 2);
    const std::int64_t bucket = s.ranks > 1 && !s.zero2 ? s.shared_bucket : 0;
    return {s.kept_grads,
            std::max(bucket, optimizer_temporaries(s.config->train.optimizer) * largest_parameter)};
}

// The micro-batches the first rank evaluates, in order, as (examples, padded length): every
// n-th batch of the validation set's plan, as the training engine walks it; without the
// validation lengths, full batches as long as the training data's longest example.
std::vector<std::pair<std::int64_t, int>> evaluation_batches(const Step& s) {
    const ExperimentConfig& config = *s.config;
    const DataProfile& profile = *s.profile;
    std::vector<std::pair<std::int64_t, int>> batches;
    if (profile.valid_lengths.empty()) {
        const std::int64_t count = (profile.valid_examples + s.batch - 1) / s.batch;
        const std::int64_t batch = std::min<std::int64_t>(s.batch, profile.valid_examples);
        for (std::int64_t i = 0; i < count; i += s.ranks) {
            batches.emplace_back(batch, worst_length(config, profile));
        }
        return batches;
    }
    const prepare::ExampleLength length = [&](std::int64_t index) {
        return profile.valid_lengths[std::size_t(index)];
    };
    const prepare::BatchPlan plan =
        prepare::plan_batches(std::int64_t(profile.valid_lengths.size()), length, s.batch,
                              config.train.padding, config.train.seed, /*epoch=*/0);
    for (std::size_t i = 0; i < plan.size(); i += std::size_t(s.ranks)) {
        batches.emplace_back(std::int64_t(plan[i].size()),
                             int(prepare::padded_length(length, plan[i], config.train.padding,
                                                        config.train.max_len)));
    }
    return batches;
}

Phase evaluation_phase(const Step& s) {
    const ExperimentConfig& config = *s.config;
    const DataProfile& profile = *s.profile;
    Phase evaluation;
    if (profile.valid_examples == 0) {
        return evaluation;
    }
    // The model evaluates in eval mode, where dropout passes its input on: no masks, no
    // copies.
    ExperimentConfig evaluating = config;
    evaluating.model.dropout = 0;
    std::map<std::pair<std::int64_t, int>, memory::ActivationBytes> shapes;
    const auto activations = [&](const std::pair<std::int64_t, int>& shape) {
        const auto [at, added] = shapes.try_emplace(shape);
        if (added) {
            at->second = memory::estimate_activations(evaluating, s.dim, profile.num_classes,
                                                      {shape.first, shape.second});
        }
        return at->second;
    };
    // Without autograd only the op in flight and its input are alive; with it, each batch's
    // graph stays until evaluation ends, so a batch runs beside every earlier one's.
    std::int64_t kept = 0;
    for (const auto& batch : evaluation_batches(s)) {
        const memory::ActivationBytes eval = activations(batch);
        if (config.eval.no_grad) {
            evaluation.other =
                std::max(evaluation.other, eval.forward_transient + eval.forward_transient_beside);
        } else {
            kept += eval.saved;
            evaluation.other = std::max(evaluation.other, kept + eval.forward_transient);
        }
    }
    // ZeRO-3 gathers every part once for the whole evaluation.
    evaluation.gathered = s.zero3 ? s.others + (config.embeddings.trainable ? s.table : 0) : 0;
    return evaluation;
}

}  // namespace

std::vector<std::int64_t> batch_tensors(std::int64_t batch, std::int64_t length) {
    return {batch * length * kIndex, batch * length, batch * kIndex};  // ids, mask, labels
}

std::int64_t batch_bytes(std::int64_t batch, std::int64_t length) {
    std::int64_t bytes = 0;
    for (const std::int64_t tensor : batch_tensors(batch, length)) {
        bytes += tensor;
    }
    return bytes;
}

std::int64_t eager_data_bytes(const Step& s) {
    return s.config->data.loading == DataLoading::Eager
               ? s.profile->train_examples * (s.config->train.max_len * kIndex + 2 * kIndex)
               : 0;
}

std::int64_t batches_resident(const Step& s) {
    return s.config->data.loading == DataLoading::Eager ? 1 : kStreamingBatchesInFlight;
}

std::int64_t element_bytes(DType dtype) {
    switch (dtype) {
        case DType::Fp32:
            return 4;
        case DType::Int8:
            return 1;
        default:
            return 2;
    }
}

bool Step::gradient_done(const std::string& module) const {
    return std::find(act.gradients_done.begin(), act.gradients_done.end(), module) !=
           act.gradients_done.end();
}

std::int64_t Step::gathered_in(const std::string& part, bool backward) const {
    if (!zero3) {
        return 0;
    }
    // A table's backward reads only the ids, and a frozen table is whole anyway.
    if (part == "embeddings") {
        return backward || !config->embeddings.trainable ? 0 : table;
    }
    for (const memory::ModuleBytes& weight : weights) {
        if (weight.module == part) {
            return weight.bytes * kFloat;
        }
    }
    return 0;
}

Step step_of(const ExperimentConfig& config, const DataProfile& profile, int world_size,
             int length) {
    const EmbeddingsConfig& embeddings = config.embeddings;
    Step s;
    s.config = &config;
    s.profile = &profile;
    s.dim = profile.embedding_dim;
    s.batch = config.train.batch_size;
    s.length = length;

    s.ranks = std::max(1, world_size);
    s.shard = s.ranks > 1 ? config.distributed.shard : ShardMode::None;
    s.zero3 = s.shard == ShardMode::Parameters;
    s.zero2 = s.shard == ShardMode::Gradients || s.zero3;

    EmbeddingTableCost table_cost = embedding_table_cost(config, profile.vocab_rows, s.dim);
    const bool table_on_host = config.on_cuda() && embeddings.placement == EmbeddingPlacement::Cpu;
    if (table_on_host) {
        s.host_bytes = table_cost.weights + table_cost.gradient + table_cost.optimizer_state;
        table_cost = {};
    }
    s.table = table_cost.weights;
    s.table_element = element_bytes(embeddings.dtype);
    s.others = memory::non_embedding_parameters(config, s.dim, profile.num_classes) * kFloat;
    s.dense_table_grad = table_cost.gradient > 0;
    const std::int64_t trainable = s.others + (embeddings.trainable ? s.table : 0);
    s.updated = s.shard == ShardMode::None ? trainable : s.share(trainable);
    const std::int64_t flat_elements =
        s.others / kFloat + (embeddings.trainable ? s.table / s.table_element : 0);
    s.range_elements = (flat_elements + s.ranks - 1) / s.ranks;

    const std::int64_t sparse_table_grad =
        embeddings.trainable && embeddings.sparse_grad && !table_on_host
            ? std::int64_t(s.batch) * s.length * (s.dim * kFloat + kIndex) *
                  config.train.accumulation
            : 0;
    s.gradients = s.others + (s.dense_table_grad ? s.table : 0) + sparse_table_grad;
    s.kept_grads = s.zero2 ? s.share(s.gradients) : s.gradients;
    s.accumulating = config.train.accumulation > 1;
    s.earlier_grads = s.accumulating ? s.kept_grads : 0;
    // The table's new dense gradient is added into the accumulated one: briefly two. It is a
    // gradient from the moment autograd makes it.
    s.grad_sum_copy = s.accumulating && s.dense_table_grad && !s.zero2 ? s.table : 0;

    s.act = memory::estimate_activations(config, s.dim, profile.num_classes, {s.batch, s.length});
    s.weights = memory::parameters_by_module(config, s.dim, profile.num_classes);
    s.weight_casts = config.memory.precision == DType::Fp32 ? 0 : s.others / 2;
    s.kept_beside = s.weight_casts + (config.debug.keep_loss_graph ? kept_graphs(s) : 0);

    // Gradients are summed in buckets of at most distributed.bucket_mb; a gradient larger than
    // that is summed alone, in place. A bucket of several is a copy of their gradients.
    const std::int64_t bucket_limit = std::int64_t{config.distributed.bucket_mb} << 20;
    s.largest_gradient = s.dense_table_grad ? std::max(s.table, s.others / 2) : s.others / 2;
    s.largest_alone = s.largest_gradient > bucket_limit;
    s.shared_bucket =
        bucket_limit == 0
            ? 0
            : std::min(bucket_limit,
                       s.largest_alone ? s.gradients - s.largest_gradient : s.gradients);
    s.in_progress = s.act.gradient_in_progress.bytes * kFloat;
    return s;
}

std::int64_t add_resident(const Step& s, MemoryBreakdown& b) {
    const ExperimentConfig& config = *s.config;
    const bool trainable_table = config.embeddings.trainable;
    b.embedding_table = s.table;
    b.parameters = s.others;
    if (s.zero3) {
        // Only this rank's range of the flattened elements stays between a part's uses.
        const std::int64_t table_kept =
            trainable_table ? std::min(s.range_elements, s.table / s.table_element) : 0;
        b.embedding_table = trainable_table ? table_kept * s.table_element : s.table;
        b.parameters = (s.range_elements - table_kept) * kFloat;
    }
    b.optimizer_state = optimizer_state_copies(config.train.optimizer) * s.updated;
    b.data = eager_data_bytes(s) + batches_resident(s) * batch_bytes(s.batch, s.length);
    return b.embedding_table + b.parameters + b.optimizer_state + b.data;
}

Peak peak_of(const Step& s) {
    const Backward backward = backward_phases(s);
    const Phase phases[] = {forward_phase(s),
                            backward.peaks_at_end() ? backward.end : backward.start,
                            optimizer_phase(s), evaluation_phase(s)};
    const auto largest =
        std::max_element(std::begin(phases), std::end(phases),
                         [](const Phase& x, const Phase& y) { return x.total() < y.total(); });
    Peak peak;
    peak.kind = static_cast<PhaseKind>(largest - std::begin(phases));
    peak.bytes = *largest;
    peak.backward_ending = peak.kind == PhaseKind::Backward && backward.peaks_at_end();
    switch (peak.kind) {
        case PhaseKind::Forward:
            peak.gathered_part = s.act.forward_transient_in;
            break;
        case PhaseKind::Backward:
            peak.gathered_part =
                peak.backward_ending ? s.act.backward_ends_in : s.act.backward_starts_in;
            break;
        default:
            break;
    }
    return peak;
}

}  // namespace oomlab::estimator
