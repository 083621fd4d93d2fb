#include "oomlab/advice/oom_fixes.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "oomlab/allocator/allocator_settings.h"
#include "oomlab/common/format.h"
#include "oomlab/common/name_table.h"
#include "oomlab/config/config_io.h"
#include "oomlab/estimator/estimator.h"

namespace oomlab {
namespace {

constexpr double kHeadroom = 0.95;  // a fix must leave this share of the capacity unused

// The estimator, scaled to what the failed run showed and held against the capacity.
class Predictor {
public:
    Predictor(const OomSituation& situation)
        : m_profile(situation.profile),
          m_capacity(situation.capacity_bytes),
          m_world_size(situation.world_size) {
        const std::int64_t predicted = raw_peak(situation.config);
        // The run needed more than its capacity; if the estimator thought it fit, it
        // under-predicts this configuration by at least that much.
        if (predicted > 0 && predicted < m_capacity) {
            m_scale = double(m_capacity) / double(predicted);
        }
    }

    std::int64_t peak(const ExperimentConfig& config) const {
        return static_cast<std::int64_t>(std::ceil(double(raw_peak(config)) * m_scale));
    }
    bool fits(const ExperimentConfig& config) const {
        return double(peak(config)) <= kHeadroom * double(m_capacity);
    }
    std::int64_t capacity() const { return m_capacity; }
    // The estimator's own figure, for a fix that changes where tensors go, not how many.
    std::int64_t unscaled_peak(const ExperimentConfig& config) const { return raw_peak(config); }

private:
    std::int64_t raw_peak(const ExperimentConfig& config) const {
        return estimate_memory(config, m_profile, m_world_size).peak_bytes;
    }

    const DataProfile& m_profile;
    std::int64_t m_capacity;
    int m_world_size;
    double m_scale = 1.0;
};

struct Candidate {
    Settings set;
    std::string reason;
    FixCost cost;
};

std::string num(std::int64_t value) {
    return std::to_string(value);
}

// The config with `set` applied, or nothing when the result is not a valid experiment for
// the situation's processes and device.
std::optional<ExperimentConfig> applied(const OomSituation& situation,
                                        const ExperimentConfig& config, const Settings& set) {
    ExperimentConfig next = config;
    try {
        apply_settings(next, set);
        validate_config(next);
        validate_data_parallel(next, situation.world_size, situation.on_cuda);
    } catch (const std::exception&) {
        return std::nullopt;
    }
    return next;
}

// Halving factors 2, 4, 8, ... until `batch` examples are one micro-batch each; the first
// that fits, if any.
std::optional<int> smallest_split(const ExperimentConfig& config, const Predictor& predict,
                                  bool keep_effective_batch) {
    const int batch = config.train.batch_size;
    for (int k = 2; batch / (k / 2) > 1; k *= 2) {
        ExperimentConfig next = config;
        next.train.batch_size = std::max(1, batch / k);
        if (keep_effective_batch) {
            next.train.accumulation = config.train.accumulation * k;
        }
        if (predict.fits(next)) {
            return k;
        }
    }
    return std::nullopt;
}

// Every change worth considering for `c`, in order of preference within each cost.
std::vector<Candidate> candidates(const OomSituation& situation, const Predictor& predict) {
    const ExperimentConfig& c = situation.config;
    const DataProfile& profile = situation.profile;
    const bool on_cuda = situation.on_cuda;
    std::vector<Candidate> out;
    if (c.debug.keep_loss_graph) {
        out.push_back({{{"debug.keep_loss_graph", "false"}},
                       "Stop keeping every step's loss graph: the leak grows with each step "
                       "until memory runs out.",
                       FixCost::None});
    }
    if (!c.eval.no_grad) {
        out.push_back({{{"eval.no_grad", "true"}},
                       "Evaluate without autograd: evaluation then keeps no activations.",
                       FixCost::None});
    }
    if (c.train.padding == Padding::Fixed) {
        out.push_back({{{"train.padding", "dynamic"}},
                       "Pad each batch to its longest example instead of train.max_len; "
                       "padding is masked, so training is the same.",
                       FixCost::None});
    }
    const bool trainable = c.embeddings.trainable;
    if (trainable && !c.embeddings.sparse_grad &&
        (c.train.optimizer == OptimizerKind::Sgd || c.train.optimizer == OptimizerKind::Adagrad)) {
        out.push_back({{{"embeddings.sparse_grad", "true"}},
                       "Sparse gradients for the table: only the rows a batch used, instead of "
                       "a gradient as large as the table.",
                       FixCost::None});
    }
    if (situation.world_size > 1) {
        const std::string processes = num(situation.world_size);
        if (c.distributed.shard == ShardMode::None) {
            out.push_back({{{"distributed.shard", "optimizer"}},
                           "Shard the optimizer state (ZeRO-1): each of the " + processes +
                               " processes keeps 1/" + processes +
                               " of it and updates only that share of the parameters, then "
                               "sends it to the others; the same training, one more "
                               "broadcast per step.",
                           FixCost::Slower});
        }
        // A bucket waits whole for its sum: one holding most of the gradients would give
        // ZeRO-2's saving back, so the fix makes them at most a quarter of a process's.
        const MemoryBreakdown weights = estimate_memory(c, profile, 1).breakdown;
        const std::int64_t learned = weights.parameters + (trainable ? weights.embedding_table : 0);
        const int bucket_mb = static_cast<int>(std::clamp<std::int64_t>(
            (learned / (4 * situation.world_size)) >> 20, 1, c.distributed.bucket_mb));
        std::string buckets = "each bucket of gradients reduced as soon as backward fills it";
        Settings smaller_buckets;
        if (c.distributed.bucket_mb > 0 && bucket_mb < c.distributed.bucket_mb) {
            smaller_buckets.emplace_back("distributed.bucket_mb", num(bucket_mb));
            buckets = "the gradients reduced in buckets of " + num(bucket_mb) +
                      " MiB as backward fills them (a bucket waits whole for its sum)";
        }
        const auto sharding = [&](const char* mode) {
            Settings set{{"distributed.shard", mode}};
            set.insert(set.end(), smaller_buckets.begin(), smaller_buckets.end());
            return set;
        };
        if (c.distributed.shard == ShardMode::None || c.distributed.shard == ShardMode::Optimizer) {
            out.push_back({sharding("gradients"),
                           "Shard the optimizer state and the gradients (ZeRO-2): each of the " +
                               processes + " processes keeps 1/" + processes +
                               " of both; the same training, with " + buckets + ".",
                           FixCost::Slower});
        }
        if (c.distributed.shard != ShardMode::Parameters) {
            out.push_back({sharding("parameters"),
                           "Shard the parameters too (ZeRO-3): each of the " + processes +
                               " processes keeps 1/" + processes +
                               " of the parameters, gradients and optimizer state, and gathers "
                               "each part's parameters only while its forward or backward runs; "
                               "the same training, with two gathers per part and micro-batch "
                               "and " +
                               buckets + ".",
                           FixCost::Slower});
        }
    }
    const int batch = c.train.batch_size;
    if (const auto k = smallest_split(c, predict, /*keep_effective_batch=*/true)) {
        const int micro = std::max(1, batch / *k);
        const int accumulation = c.train.accumulation * *k;
        std::string reason = "Split each batch of " + num(batch) + " into " + num(*k) +
                             " micro-batches of " + num(micro) +
                             " and accumulate their gradients: activations for " + num(micro) +
                             " examples at a time";
        const std::int64_t before = std::int64_t(batch) * c.train.accumulation;
        const std::int64_t after = std::int64_t(micro) * accumulation;
        reason += after == before ? ", the same effective batch of " + num(before) + "."
                                  : "; the effective batch becomes " + num(after) + " instead of " +
                                        num(before) + ".";
        out.push_back(
            {{{"train.batch_size", num(micro)}, {"train.accumulation", num(accumulation)}},
             reason,
             FixCost::Slower});
    }
    if (c.model.kind == ModelKind::Transformer && c.memory.checkpointing == Checkpointing::None) {
        out.push_back({{{"memory.checkpointing", "layers"}},
                       "Recompute each encoder block in backward instead of keeping its "
                       "activations: about a third more compute.",
                       FixCost::Slower});
    }
    if (on_cuda && c.embeddings.placement == EmbeddingPlacement::Device) {
        out.push_back({{{"embeddings.placement", "cpu"}},
                       "Keep the embedding table in host memory and copy only the rows each "
                       "batch looks up.",
                       FixCost::Slower});
    }
    if (c.memory.precision == DType::Fp32) {
        out.push_back({{{"memory.precision", "bf16"}},
                       "Autocast to bfloat16: most activations take half the bytes.",
                       FixCost::Precision});
    }
    if (!trainable && c.embeddings.dtype != DType::Int8) {
        out.push_back({{{"embeddings.dtype", "int8"}},
                       "Store the frozen table in int8 with a scale per row: a quarter of its "
                       "fp32 bytes; each batch dequantizes only the rows it looks up.",
                       FixCost::Precision});
    }
    if (c.embeddings.vocab != VocabMode::Dataset) {
        out.push_back({{{"embeddings.vocab", "dataset"}},
                       "Keep only the training data's words in the table instead of " +
                           num(profile.vocab_rows) +
                           " rows; words seen only in validation lose their pre-trained "
                           "vectors.",
                       FixCost::Results});
    }
    if (trainable) {
        Settings set{{"embeddings.trainable", "false"}};
        if (c.embeddings.sparse_grad) {
            set.emplace_back("embeddings.sparse_grad", "false");
        }
        out.push_back({set,
                       "Freeze the embedding table: no gradient and no optimizer state for "
                       "it; the pre-trained vectors are no longer fine-tuned.",
                       FixCost::Results});
    }
    if (c.train.optimizer == OptimizerKind::Adam || c.train.optimizer == OptimizerKind::AdamW) {
        out.push_back({{{"train.optimizer", "momentum"}},
                       "SGD with momentum keeps one copy of the parameters as state, Adam "
                       "two; it trains differently and may need another learning rate.",
                       FixCost::Results});
    }
    if (const auto k = smallest_split(c, predict, /*keep_effective_batch=*/false)) {
        const int smaller = std::max(1, batch / *k);
        out.push_back({{{"train.batch_size", num(smaller)}},
                       "Train on batches of " + num(smaller) + " instead of " + num(batch) +
                           ": a smaller effective batch, which changes training.",
                       FixCost::Results});
    }
    return out;
}

OomFix make_fix(const Candidate& candidate, const ExperimentConfig& config,
                const Predictor& predict) {
    return {candidate.set, candidate.reason, candidate.cost, predict.peak(config)};
}

// When no single change fits: the changes that do not alter training, taken cheapest first
// until the sum fits.
std::optional<OomFix> combined_fix(const OomSituation& situation, const std::vector<Candidate>& all,
                                   const Predictor& predict) {
    const ExperimentConfig& config = situation.config;
    OomFix fix;
    ExperimentConfig next = config;
    for (const Candidate& candidate : all) {
        if (candidate.cost > FixCost::Precision) {
            break;
        }
        // A micro-batch split may need a different factor on top of the others.
        if (candidate.set.size() > 1) {
            continue;
        }
        const auto with = applied(situation, next, candidate.set);
        if (!with || predict.peak(*with) >= predict.peak(next)) {
            continue;
        }
        next = *with;
        fix.set.insert(fix.set.end(), candidate.set.begin(), candidate.set.end());
        fix.reason += (fix.reason.empty() ? "" : " ") + candidate.reason;
        fix.cost = std::max(fix.cost, candidate.cost);
    }
    if (fix.set.empty()) {
        return std::nullopt;
    }
    if (!predict.fits(next)) {
        const auto k = smallest_split(next, predict, /*keep_effective_batch=*/true);
        if (!k) {
            return std::nullopt;
        }
        const int micro = std::max(1, next.train.batch_size / *k);
        const int accumulation = next.train.accumulation * *k;
        next.train.batch_size = micro;
        next.train.accumulation = accumulation;
        fix.set.emplace_back("train.batch_size", num(micro));
        fix.set.emplace_back("train.accumulation", num(accumulation));
        fix.reason +=
            " And accumulate " + num(*k) + " micro-batches of " + num(micro) + " per step.";
        fix.cost = std::max(fix.cost, FixCost::Slower);
    }
    fix.reason = "Together: " + fix.reason;
    fix.predicted_peak_bytes = predict.peak(next);
    return fix;
}

// Fragmentation: the free memory was there, in pieces. Expandable segments map pages at the
// end of one segment per pool instead of opening segments beside the pieces, and hand back
// the whole pages inside free blocks before an OOM.
std::optional<OomFix> expandable_segments(const OomSituation& situation, const Predictor& predict) {
    const ExperimentConfig& config = situation.config;
    if (!situation.free_space || !situation.free_space->fragmented()) {
        return std::nullopt;
    }
    allocator::AllocatorSettings settings = allocator::parse_alloc_conf(config.memory.alloc_conf);
    if (settings.expandable_segments) {
        return std::nullopt;  // on already: PyTorch's own message advises it regardless
    }
    settings.expandable_segments = true;
    const Fragmentation& free = *situation.free_space;
    return OomFix{{{"memory.alloc_conf", allocator::to_alloc_conf(settings)}},
                  "The memory was there but in pieces: " + format_bytes(free.reserved_free_bytes) +
                      " reserved and free, the largest block " +
                      format_bytes(free.largest_free_block) + ", for a request of " +
                      format_bytes(free.requested_bytes) +
                      ". Expandable segments grow one segment instead of opening new ones "
                      "beside the pieces; the same training.",
                  FixCost::None,
                  predict.unscaled_peak(config)};
}

std::optional<OomFix> larger_device(const ExperimentConfig& config, const Predictor& predict) {
    if (config.memory.cap_mb <= 0) {
        return std::nullopt;  // a real device: its memory is what it is
    }
    const std::int64_t needed = predict.peak(config);
    const auto mib =
        static_cast<std::int64_t>(std::ceil(double(needed) / kHeadroom / double(kBytesPerMiB)));
    const std::int64_t cap = (mib + 7) / 8 * 8;  // a round figure
    return OomFix{{{"memory.cap_mb", num(cap)}},
                  "A device with " + num(cap) + " MiB instead of " + num(config.memory.cap_mb) +
                      " MiB fits these settings unchanged.",
                  FixCost::LargerDevice,
                  needed};
}

}  // namespace

namespace {

constexpr std::array<NamedValue<FixCost>, 5> kFixCostNames = {{
    {FixCost::None, "none"},
    {FixCost::Slower, "slower"},
    {FixCost::Precision, "precision"},
    {FixCost::Results, "results"},
    {FixCost::LargerDevice, "larger device"},
}};

}  // namespace

std::string_view fix_cost_name(FixCost cost) {
    return name_of(cost, kFixCostNames);
}

std::optional<FixCost> fix_cost_named(std::string_view name) {
    return value_named<FixCost>(name, kFixCostNames);
}

std::int64_t run_capacity_bytes(const ExperimentConfig& config, std::int64_t device_total_bytes) {
    return config.memory.cap_mb > 0 ? config.memory.cap_bytes() : device_total_bytes;
}

std::vector<OomFix> suggest_oom_fixes(const OomSituation& situation) {
    std::vector<OomFix> fixes;
    if (situation.capacity_bytes <= 0) {
        return fixes;
    }
    const ExperimentConfig& config = situation.config;
    const Predictor predict(situation);
    const std::vector<Candidate> all = candidates(situation, predict);
    for (const Candidate& candidate : all) {
        const auto next = applied(situation, config, candidate.set);
        if (next && predict.fits(*next)) {
            fixes.push_back(make_fix(candidate, *next, predict));
        }
    }
    const bool cheap_fix = std::any_of(fixes.begin(), fixes.end(), [](const OomFix& fix) {
        return fix.cost <= FixCost::Precision;
    });
    if (!cheap_fix) {
        if (auto fix = combined_fix(situation, all, predict)) {
            fixes.push_back(std::move(*fix));
        }
    }
    if (auto fix = expandable_segments(situation, predict)) {
        fixes.insert(fixes.begin(), std::move(*fix));
    }
    if (auto fix = larger_device(config, predict)) {
        fixes.push_back(std::move(*fix));
    }
    std::stable_sort(fixes.begin(), fixes.end(),
                     [](const OomFix& a, const OomFix& b) { return a.cost < b.cost; });
    return fixes;
}

}  // namespace oomlab
