// The estimator walks one training step phase by phase (forward, backward, optimizer step,
// evaluation) and sums what is alive in each; the peak is the largest phase.
#include "oomlab/estimator/estimator.h"

#include <algorithm>
#include <cmath>

#include "estimator/activation_model.h"

namespace oomlab {
namespace {

constexpr std::int64_t kFloat = 4;
constexpr std::int64_t kIndex = 8;
// The batch in use, those ready ahead, and one being built.
constexpr std::int64_t kStreamingBatchesInFlight = 1 + kStreamingBatchesAhead + 1;

std::int64_t element_bytes(DType dtype) {
    return dtype == DType::Fp32 ? 4 : 2;
}

int worst_length(const ExperimentConfig& config, const DataProfile& profile) {
    return config.train.padding == Padding::Fixed ? config.train.max_len
                                                  : std::max(1, profile.longest);
}

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

std::int64_t batch_bytes(std::int64_t batch, std::int64_t length) {
    return batch * length * (kIndex + 1) + batch * kIndex;  // ids, mask, labels
}

// Temporaries of one parameter's update: Adam's sqrt and division, Adagrad's sqrt.
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

}  // namespace

MemoryEstimate estimate_memory(const ExperimentConfig& config, const DataProfile& profile,
                               int world_size) {
    const int dim = profile.embedding_dim;
    // One rank of a data-parallel run: ZeRO keeps 1/N of the optimizer state (and gradients).
    const std::int64_t ranks = std::max(1, world_size);
    const ShardMode shard = ranks > 1 ? config.distributed.shard : ShardMode::None;
    const auto share = [&](std::int64_t bytes) { return (bytes + ranks - 1) / ranks; };
    const int batch = config.train.batch_size;
    const EmbeddingsConfig& embeddings = config.embeddings;
    MemoryEstimate estimate;
    MemoryBreakdown& b = estimate.breakdown;

    // Resident for the whole run.
    const EmbeddingTableCost table_cost = embedding_table_cost(config, profile.vocab_rows, dim);
    const std::int64_t table = table_cost.weights;
    const std::int64_t others =
        memory::non_embedding_parameters(config, dim, profile.num_classes) * kFloat;
    b.embedding_table = table;
    b.parameters = others;
    const bool dense_table_grad = table_cost.gradient > 0;
    const std::int64_t trainable = others + (embeddings.trainable ? table : 0);
    const std::int64_t updated = shard == ShardMode::None ? trainable : share(trainable);
    // ZeRO shards the trainable parameters flattened in the model's order (the table first
    // when it learns): the rank predicted, the first, owns the first 1/N of the elements.
    const std::int64_t table_element = element_bytes(embeddings.dtype);
    const std::int64_t flat_elements =
        others / kFloat + (embeddings.trainable ? table / table_element : 0);
    const std::int64_t range_elements = (flat_elements + ranks - 1) / ranks;
    // ZeRO-3 keeps only that range of the parameters between a part's uses, and gathers a
    // part's whole parameters while its forward, or its backward, runs.
    const bool zero3 = shard == ShardMode::Parameters;
    if (zero3) {
        const std::int64_t table_kept =
            embeddings.trainable ? std::min(range_elements, table / table_element) : 0;
        b.embedding_table = embeddings.trainable ? table_kept * table_element : table;
        b.parameters = (range_elements - table_kept) * kFloat;
    }
    b.optimizer_state = optimizer_state_copies(config.train.optimizer) * updated;
    const int length = worst_length(config, profile);
    estimate.worst_batch_length = length;
    estimate.every_batch_worst = config.train.padding == Padding::Fixed;
    b.data = config.data.loading == DataLoading::Eager
                 ? profile.train_examples * (config.train.max_len * kIndex + 2 * kIndex) +
                       batch_bytes(batch, length)
                 : kStreamingBatchesInFlight * batch_bytes(batch, length);
    const std::int64_t sparse_table_grad =
        embeddings.trainable && embeddings.sparse_grad
            ? std::int64_t(batch) * length * (dim * kFloat + kIndex) * config.train.accumulation
            : 0;
    const std::int64_t gradients = others + (dense_table_grad ? table : 0) + sparse_table_grad;
    const std::int64_t resident = b.embedding_table + b.parameters + b.optimizer_state + b.data;

    const memory::ActivationBytes act =
        memory::estimate_activations(config, dim, profile.num_classes, {batch, length});
    // Autocast keeps 16-bit copies of the weights for the forward pass.
    const std::int64_t weight_casts = config.memory.precision == DType::Fp32 ? 0 : others / 2;
    const bool accumulating = config.train.accumulation > 1;
    // ZeRO-2 (and 3) reduces after every micro-batch and keeps only this rank's range of the
    // sum.
    const bool zero2 = shard == ShardMode::Gradients || zero3;
    const std::int64_t kept_grads = zero2 ? share(gradients) : gradients;
    const std::int64_t earlier_grads = accumulating ? kept_grads : 0;
    // The table's new dense gradient is added into the accumulated one: briefly two.
    // It is a gradient from the moment autograd makes it.
    const std::int64_t grad_sum_copy = accumulating && dense_table_grad && !zero2 ? table : 0;

    std::int64_t activations = act.saved + weight_casts;
    if (config.debug.keep_loss_graph) {
        // Every step's graph stays alive: the last step holds all of them.
        const std::int64_t steps = std::max<std::int64_t>(
            1, config.train.max_steps > 0
                   ? config.train.max_steps
                   : config.train.epochs * ((profile.train_examples + batch - 1) / batch) /
                         config.train.accumulation);
        const memory::ActivationBytes typical = memory::estimate_activations(
            config, dim, profile.num_classes, {batch, typical_length(config, profile, batch)});
        activations += (steps * config.train.accumulation - 1) * typical.saved;
    }
    // Each phase: gradients alive, and everything else on top of the resident bytes.
    struct Phase {
        std::int64_t gradients;
        std::int64_t other;
        std::int64_t gathered = 0;  // ZeRO-3: a part's whole parameters, beside the range
        std::int64_t total() const { return gradients + other + gathered; }
    };
    const std::vector<memory::ModuleBytes> weights =
        memory::parameters_by_module(config, dim, profile.num_classes);
    // ZeRO-3 gathers the part running; a table's backward reads only the ids, and a frozen
    // table is whole anyway.
    const auto gathered_in = [&](const std::string& part, bool backward) -> std::int64_t {
        if (!zero3) {
            return 0;
        }
        if (part == "embeddings") {
            return backward || !embeddings.trainable ? 0 : table;
        }
        for (const memory::ModuleBytes& weight : weights) {
            if (weight.module == part) {
                return weight.bytes * kFloat;
            }
        }
        return 0;
    };
    // Forward peaks in the module that makes the widest temporary: the later modules have
    // saved nothing yet.
    const std::int64_t kept_beside = activations - act.saved;  // weight casts, kept graphs
    const Phase forward{
        earlier_grads,
        kept_beside + memory::total_bytes(act.at_forward_peak) + act.forward_transient,
        gathered_in(act.forward_transient_in, false)};
    // Gradients are summed in buckets of at most distributed.bucket_mb; a gradient larger than
    // that is summed alone, in place. A bucket of several is a copy of their gradients.
    const std::int64_t bucket_limit = std::int64_t{config.distributed.bucket_mb} << 20;
    const std::int64_t largest_gradient =
        dense_table_grad ? std::max(table, others / 2) : others / 2;
    const bool largest_alone = largest_gradient > bucket_limit;
    const std::int64_t shared_bucket =
        bucket_limit == 0
            ? 0
            : std::min(bucket_limit, largest_alone ? gradients - largest_gradient : gradients);
    // ZeRO-2 moves each gradient into its bucket as it is accumulated and sums a bucket once
    // full, keeping its range of the sums. At the end of backward: the range, and the largest
    // gradient alone or being copied into its bucket beside it (the range exists once an
    // earlier bucket was summed).
    const std::int64_t zero2_waiting =
        largest_alone
            ? share(gradients) + std::min(gradients, largest_gradient)
            : shared_bucket + largest_gradient + (gradients > bucket_limit ? share(gradients) : 0);
    // Backward peaks where it starts (every saved tensor alive) or where it ends (every
    // gradient alive, the saved tensors freed), whichever holds more. ZeRO-2 allocates its
    // first bucket at the first gradient, while the saved tensors are still alive.
    const std::int64_t zero2_at_start = zero2 ? shared_bucket : 0;
    const auto gradient_done = [&](const std::string& module) {
        return std::find(act.gradients_done.begin(), act.gradients_done.end(), module) !=
               act.gradients_done.end();
    };
    // Without accumulation, only the gradients backward has finished, and the one it computes
    // (with ZeRO-2 the finished ones have moved into their bucket).
    const std::int64_t in_progress = act.gradient_in_progress.bytes * kFloat;
    std::int64_t first_gradients = in_progress;
    for (const memory::ModuleBytes& part : weights) {
        first_gradients +=
            !accumulating && !zero2 && gradient_done(part.module) ? part.bytes * kFloat : 0;
    }
    const Phase backward_start{
        earlier_grads + zero2_at_start + first_gradients,
        kept_beside + memory::total_bytes(act.at_backward_start) + act.backward_transient,
        gathered_in(act.backward_starts_in, true)};
    const Phase backward_end{(zero2 ? zero2_waiting : gradients) + grad_sum_copy,
                             act.backward_end_transient, gathered_in(act.backward_ends_in, true)};
    const bool peaks_at_backward_end = backward_end.total() > backward_start.total();
    const Phase backward = peaks_at_backward_end ? backward_end : backward_start;
    const std::int64_t largest_parameter =
        std::min(updated, embeddings.trainable ? std::max(table, others / 2) : others / 2);
    // Without ZeRO-2 the gradients are summed across ranks in buckets before the update.
    const std::int64_t bucket = ranks > 1 && !zero2 ? shared_bucket : 0;
    const Phase optimizer{
        kept_grads,
        std::max(bucket, optimizer_temporaries(config.train.optimizer) * largest_parameter)};
    Phase evaluation{0, 0};
    if (profile.valid_examples > 0) {
        const memory::ActivationBytes eval = memory::estimate_activations(
            config, dim, profile.num_classes,
            {std::min<std::int64_t>(batch, profile.valid_examples), length});
        const std::int64_t eval_batches = (profile.valid_examples + batch - 1) / batch;
        // Without autograd only the op in flight and its input are alive.
        evaluation.other = config.eval.no_grad ? 2 * eval.forward_transient
                                               : eval_batches * eval.saved + eval.forward_transient;
        // ZeRO-3 gathers every part once for the whole evaluation.
        evaluation.gathered = zero3 ? others + (embeddings.trainable ? table : 0) : 0;
    }
    const Phase phases[] = {forward, backward, optimizer, evaluation};
    const auto peak_phase =
        std::max_element(std::begin(phases), std::end(phases),
                         [](const Phase& x, const Phase& y) { return x.total() < y.total(); }) -
        std::begin(phases);
    const Phase& peak = phases[peak_phase];
    b.gradients = peak.gradients;
    b.activations = peak.other;
    const bool backward_ending = peak_phase == 1 && peaks_at_backward_end;
    // The part gathered at the peak (all of them in evaluation).
    const std::string gathered_part = peak_phase == 0   ? act.forward_transient_in
                                      : backward_ending ? act.backward_ends_in
                                      : peak_phase == 1 ? act.backward_starts_in
                                                        : std::string();
    if (peak_phase == 3) {
        b.parameters += zero3 ? others : 0;
        b.embedding_table += peak.gathered - (zero3 ? others : 0);
    } else {
        (gathered_part == "embeddings" ? b.embedding_table : b.parameters) += peak.gathered;
    }

    // The same peak by module. Parameters, gradients and state follow each module's weights;
    // activations are what each saved, with the step's temporaries where they arise.
    // ZeRO-2's buckets and range of the summed gradients are the update's (the "optimizer"
    // row); at the end of backward a module holds only the largest gradient, the one still
    // being summed or copied into its bucket. Without ZeRO-2 the modules hold their own
    // gradients.
    std::string largest_module = "embeddings";
    if ((!dense_table_grad || table < others / 2) && !weights.empty()) {
        largest_module =
            std::max_element(weights.begin(), weights.end(), [](const auto& x, const auto& y) {
                return x.bytes < y.bytes;
            })->module;
    }
    const bool backward_starting = peak_phase == 1 && !backward_ending;
    const std::int64_t zero2_in_module = !zero2              ? 0
                                         : backward_ending   ? std::min(gradients, largest_gradient)
                                         : backward_starting ? in_progress
                                                             : 0;
    const std::int64_t range_grads = zero2 ? peak.gradients - zero2_in_module : 0;
    const bool modules_hold_grads = !zero2 && peak.gradients > 0;
    // The rank predicted (the first) keeps the state (and with ZeRO-3 the parameters) of the
    // first 1/N of the flattened elements, whichever modules hold them. Called once per
    // learning module, in that order.
    std::int64_t first_shard_left = range_elements;
    const auto first_shard_bytes = [&](std::int64_t parameters, std::int64_t element) {
        const std::int64_t taken = std::min(first_shard_left, parameters / element);
        first_shard_left -= taken;
        return taken * element;
    };
    const auto gradient_of = [&](const std::string& name, std::int64_t parameters) {
        if (zero2) {
            const std::string& holder =
                backward_ending ? largest_module : act.gradient_in_progress.module;
            return name == holder ? zero2_in_module : 0;
        }
        if (!backward_starting) {
            return modules_hold_grads ? parameters : 0;
        }
        const std::int64_t fresh = name == act.gradient_in_progress.module ? in_progress : 0;
        return (accumulating || gradient_done(name) ? parameters : 0) + fresh;
    };
    const auto add_module = [&](const std::string& name, std::int64_t parameters, bool learns,
                                std::int64_t element = kFloat) -> ModuleMemory& {
        ModuleMemory& module = estimate.by_module.emplace_back();
        module.module = name;
        const std::int64_t kept = learns && shard != ShardMode::None
                                      ? first_shard_bytes(parameters, element)
                                      : parameters;
        const bool gathered = peak_phase == 3 || name == gathered_part;
        module.parameters =
            zero3 && learns ? kept + (gathered && peak.gathered > 0 ? parameters : 0) : parameters;
        module.gradients = learns ? gradient_of(name, parameters) : 0;
        module.optimizer_state = learns ? optimizer_state_copies(config.train.optimizer) * kept : 0;
        module.activations = 0;
        return module;
    };
    add_module("embeddings", table, embeddings.trainable, table_element).gradients =
        dense_table_grad ? gradient_of("embeddings", table) +
                               (backward_ending && modules_hold_grads ? grad_sum_copy : 0)
                         : 0;
    for (const memory::ModuleBytes& part : weights) {
        add_module(part.module, part.bytes * kFloat, true);
    }
    add_module("loss", 0, false);
    add_module("optimizer", 0, false).gradients = range_grads;
    add_module("other", 0, false);
    const auto module_named = [&](const std::string& name) -> ModuleMemory& {
        for (ModuleMemory& module : estimate.by_module) {
            if (module.module == name) {
                return module;
            }
        }
        return estimate.by_module.back();  // "other"
    };
    const bool training_phase = peak_phase <= 1;  // forward or backward
    if (training_phase && peak.other > 0 && !config.debug.keep_loss_graph) {
        if (backward_ending) {
            // The saved tensors are gone; the last module's backward holds its temporary.
            *module_named(act.backward_ends_in).activations += peak.other;
        } else {
            for (const memory::ModuleBytes& part :
                 peak_phase == 1 ? act.at_backward_start : act.at_forward_peak) {
                *module_named(part.module).activations += part.bytes;
            }
            for (const memory::ModuleBytes& part : weights) {
                // Autocast's 16-bit copy of each module's weights.
                *module_named(part.module).activations +=
                    weight_casts > 0 ? part.bytes * kFloat / 2 : 0;
            }
            // The step's temporaries: in forward, where the largest arises; in backward,
            // where it starts.
            *module_named(peak_phase == 0 ? act.forward_transient_in : act.backward_starts_in)
                 .activations += peak_phase == 0 ? act.forward_transient : act.backward_transient;
        }
    } else {
        // The update's temporaries, a validation pass, or graphs kept alive: not one module's.
        *module_named(peak_phase == 2 ? "optimizer" : "other").activations += peak.other;
    }
    const std::int64_t on_top = peak.total();
    estimate.peak_bytes = resident + on_top;
    estimate.cap_bytes = config.memory.cap_bytes();
    estimate.fits = estimate.cap_bytes == 0 || estimate.peak_bytes <= estimate.cap_bytes;
    return estimate;
}

EmbeddingTableCost embedding_table_cost(const ExperimentConfig& config, std::int64_t rows,
                                        int dim) {
    EmbeddingTableCost cost;
    cost.weights = rows * dim * element_bytes(config.embeddings.dtype);
    if (config.embeddings.trainable) {
        cost.gradient = config.embeddings.sparse_grad ? 0 : cost.weights;
        cost.optimizer_state = optimizer_state_copies(config.train.optimizer) * cost.weights;
    }
    return cost;
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
