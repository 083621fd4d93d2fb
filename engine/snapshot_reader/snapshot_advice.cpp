#include "oomlab/snapshot_reader/snapshot_advice.h"

#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <string_view>

#include "oomlab/allocator/trace_replay.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/format.h"
#include "oomlab/run/fragmentation.h"
#include "oomlab/snapshot_reader/snapshot_whatif.h"
#include "snapshot_advice_parts.h"

namespace oomlab {

std::string percent_of(std::int64_t part, std::int64_t whole) {
    return std::to_string(whole > 0 ? (100 * part + whole / 2) / whole : 0) + "%";
}

namespace {

// The setting as the platform takes it: ROCm's builds from PyTorch 2.11, with ROCm 7. Where
// the file does not record the settings (a profiler's trace), it may have been on already.
std::string expandable_setting(const SnapshotDevice& device,
                               const std::optional<std::string>& alloc_conf) {
    return (device.rocm ? "PYTORCH_HIP_ALLOC_CONF=expandable_segments:True (ROCm builds of "
                          "PyTorch 2.11 and later, with ROCm 7)"
                        : "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True") +
           (alloc_conf ? std::string()
                       : ", if it was not on already (" +
                             unrecorded_settings_words(device.from_trace) + ")");
}
// Cached but free memory worth acting on, without an out-of-memory event to decide.
constexpr double kCachedShare = 0.2;
constexpr std::int64_t kCachedBytes = 64LL << 20;
constexpr double kUntracedShare = 0.5;  // and a history that saw less than this is said to
// Activations worth shrinking with mixed precision or checkpointing: most of what is alive,
// and, with no out-of-memory to say the device was small, more than a test's few MiB.
constexpr double kActivationShare = 0.4;
constexpr std::int64_t kActivationBytes = 64LL << 20;
constexpr double kMathAttentionShare = 0.1;  // of what is allocated: the weights worth naming
constexpr const char* kForward = "forward";  // the kind of what forward keeps for backward
constexpr const char* kBackward = "backward";
constexpr const char* kEngineActivations = "oomlab: forward: activations";  // the engine's tag
constexpr const char* kOptimizerStep = "optimizer step";

// The trace replayed through the allocator's model, as recorded and with expandable segments
// (where they are not on already), with what the program reserved at most as the capacity when
// it ran out of memory. Each replay is made once, when first asked for: a long trace takes
// seconds.
class AllocatorReplays {
public:
    AllocatorReplays(const SnapshotDevice& device, const std::optional<std::string>& alloc_conf)
        : m_device(device) {
        if (device.changes.empty()) {
            return;  // segments only: nothing to replay
        }
        try {
            m_settings = allocator::parse_alloc_conf(alloc_conf.value_or(""));
        } catch (const BadInput&) {
            // settings this model does not read: nothing replayed
        }
    }

    // Null where nothing is replayed.
    const allocator::WhatIf* recorded() { return replay(m_recorded, false); }
    // Null also where the snapshot had expandable segments on.
    const allocator::WhatIf* expandable() {
        return m_settings && m_settings->expandable_segments ? nullptr : replay(m_expandable, true);
    }

private:
    const allocator::WhatIf* replay(std::optional<allocator::WhatIf>& slot, bool expandable) {
        if (!m_settings) {
            return nullptr;
        }
        if (!slot) {
            if (!m_trace) {
                m_trace = allocator_trace(m_device, *m_settings);
            }
            allocator::AllocatorSettings settings = *m_settings;
            settings.expandable_segments = settings.expandable_segments || expandable;
            const std::int64_t capacity = m_device.ooms.empty() ? 0 : m_device.peak_reserved;
            slot = allocator::replay_under(*m_trace, settings, capacity, 1);
        }
        return &*slot;
    }

    const SnapshotDevice& m_device;
    std::optional<allocator::AllocatorSettings> m_settings;  // unset: nothing to replay
    std::optional<allocator::AllocatorTrace> m_trace;
    std::optional<allocator::WhatIf> m_recorded;
    std::optional<allocator::WhatIf> m_expandable;
};

// What a new segment could still get at a failure: the device's free memory, within what the
// program reserved at most (a snapshot does not record a memory fraction).
std::int64_t room_to_reserve(const SnapshotOom& oom, std::int64_t most_reserved,
                             std::int64_t reserved) {
    return std::min(oom.device_free, std::max<std::int64_t>(0, most_reserved - reserved));
}

// The request's pool in a snapshot dumped when the request failed, as an out-of-memory
// observer dumps it (its trace ends with the failure): the segments themselves, as the
// allocator left them after releasing its cached segments to retry.
std::optional<Fragmentation> free_space_dumped(const SnapshotDevice& device,
                                               const SnapshotOom& oom) {
    if (device.events == 0 || oom.event + 1 != device.events) {
        return std::nullopt;
    }
    Fragmentation free_space;
    free_space.requested_bytes = oom.requested;
    const bool small = std::string_view(free_space.pool()) == "small";
    for (const SnapshotSegmentLayout& segment : device.layout) {
        if (segment.small != small) {
            continue;
        }
        for (const SnapshotSegmentLayout::Block& block : segment.blocks) {
            if (!block.allocated) {
                free_space.reserved_free_bytes += block.size;
                free_space.largest_free_block = std::max(free_space.largest_free_block, block.size);
                ++free_space.free_blocks;
            }
        }
    }
    free_space.unreserved_free_bytes = room_to_reserve(oom, device.peak_reserved, device.reserved);
    return free_space;
}

// The request's pool when it failed, as the replay under the recorded settings left it (the
// small pool's free blocks never serve a large request, nor the other way round).
std::optional<Fragmentation> free_space_at(const allocator::WhatIf& recorded,
                                           const SnapshotOom& oom) {
    for (const allocator::OomOutcome& replayed : recorded.ooms) {
        if (replayed.event == oom.event && replayed.happens) {
            const allocator::ModelStats& pool = replayed.at_failure;
            return Fragmentation{oom.requested, pool.cached_free, pool.largest_free,
                                 pool.free_blocks,
                                 room_to_reserve(oom, recorded.capacity, pool.reserved)};
        }
    }
    return std::nullopt;
}

bool expandable_on(const std::optional<std::string>& alloc_conf) {
    return alloc_conf && allocator::expandable_segments_on(*alloc_conf);
}

// A replay whose own figure is not the program's (2% off: a trace begun late replays only its
// own requests) is said to be so, as `snapshot whatif` says it.
std::string replayed(const SnapshotDevice& device, const allocator::WhatIf& recorded,
                     const allocator::WhatIf& expandable) {
    const std::int64_t off = recorded.peak_reserved - device.peak_reserved;
    const bool the_programs = std::abs(off) <= device.peak_reserved / 50;
    return "replayed with it, peak reserved " + format_bytes(recorded.peak_reserved) + " -> " +
           format_bytes(expandable.peak_reserved) +
           (the_programs ? ""
                         : " (the replay's own figures, not the program's " +
                               format_bytes(device.peak_reserved) +
                               ": it replays what the trace recorded, not what came before)");
}

// Advice on the out-of-memory: fragmentation, or memory really in use (returned true).
bool advise_on_oom(const SnapshotDevice& device, const SnapshotOom& oom,
                   const std::optional<std::string>& alloc_conf,
                   std::vector<SnapshotAdvice>& advice) {
    AllocatorReplays replays(device, alloc_conf);
    std::optional<Fragmentation> pool = free_space_dumped(device, oom);
    if (!pool && replays.recorded()) {
        pool = free_space_at(*replays.recorded(), oom);
    }
    // Without a replay (no trace, or settings the model does not read): both pools' cache.
    const std::int64_t cached = pool ? pool->reserved_free_bytes : oom.reserved - oom.allocated;
    const std::string where =
        pool ? std::string(" in the ") + pool->pool() + " pool that serves it (" +
                   std::to_string(pool->free_blocks) +
                   (pool->free_blocks == 1 ? " block, the largest " : " blocks, the largest ") +
                   format_bytes(pool->largest_free_block) + ")"
             : std::string();
    if (pool ? pool->fragmented() : cached >= oom.requested) {
        const std::string enough =
            cached >= oom.requested ? "more than the " + format_bytes(oom.requested) + " asked for"
                                    : "enough with what could still be reserved for the " +
                                          format_bytes(oom.requested) + " asked for";
        const std::string fragmented =
            "at the out-of-memory (event " + std::to_string(event_number(oom.event)) + "), " +
            format_bytes(cached) + " was reserved but held no tensor" + where + ", " + enough +
            ", in pieces none of which was large enough: the cache is "
            "fragmented";
        if (expandable_on(alloc_conf)) {
            advice.push_back({"keep tensor sizes steady",
                              fragmented + ", with expandable_segments already on (the "
                                           "snapshot's allocator_settings). Pad batches to a "
                                           "fixed or bucketed length: blocks of one size are "
                                           "reused whole."});
            return false;
        }
        const allocator::WhatIf* const expandable = replays.expandable();
        const auto outcome = [&]() -> std::optional<bool> {
            if (!expandable) {
                return std::nullopt;
            }
            for (const allocator::OomOutcome& replayed_oom : expandable->ooms) {
                if (replayed_oom.event == oom.event) {
                    return replayed_oom.happens;
                }
            }
            return std::nullopt;
        }();
        if (outcome && *outcome) {
            advice.push_back({"keep tensor sizes steady",
                              fragmented + ". Expandable segments would not save it: " +
                                  replayed(device, *replays.recorded(), *expandable) +
                                  ", and the error still happens. Pad batches to a fixed or "
                                  "bucketed length, or hold less."});
            return false;
        }
        advice.push_back(
            {expandable_setting(device, alloc_conf),
             fragmented +
                 ". Expandable segments grow one mapping instead of leaving gaps between blocks "
                 "of different sizes" +
                 (outcome ? ": " + replayed(device, *replays.recorded(), *expandable) +
                                ", and the out-of-memory error at event " +
                                std::to_string(event_number(oom.event)) + " does not happen."
                          : ".")});
        return false;
    }
    const std::string limit = process_limit_note(oom);
    advice.push_back(
        {"hold less at the peak",
         "at the out-of-memory (event " + std::to_string(event_number(oom.event)) + "), " +
             format_bytes(oom.requested) + " was asked with " + format_bytes(oom.device_free) +
             " free on the device and only " + format_bytes(cached) + " cached but free" + where +
             (limit.empty() ? "" : " (" + limit + ")") +
             ": the memory was really in use, so fragmentation settings will not help. A "
             "smaller batch, mixed precision or activation checkpointing shrink what is alive; "
             "the lines below hold the most."});
    return true;
}

std::int64_t bytes_of_kind(const std::vector<SnapshotLine>& by_kind, const char* kind) {
    for (const SnapshotLine& group : by_kind) {
        if (group.where == kind) {
            return group.bytes;
        }
    }
    return 0;
}

// What forward kept for backward: its own kind, and the math attention kernel's within it.
std::int64_t activation_bytes(const std::vector<SnapshotLine>& by_kind) {
    return bytes_of_kind(by_kind, kForward) + bytes_of_kind(by_kind, kMathAttentionFallbackKind);
}

// Byte counts a device can hold (none negative, none past 64 PiB): what a hostile file says
// otherwise is not advised on, and sums and percentages of these cannot overflow.
bool plausible(std::initializer_list<std::int64_t> bytes) {
    constexpr std::int64_t kMost = std::int64_t{1} << 56;
    return std::all_of(bytes.begin(), bytes.end(),
                       [](std::int64_t value) { return value >= 0 && value <= kMost; });
}

// Whether anything of `kind` was allocated before the `before`-th event.
bool allocated_any(const SnapshotDevice& device, const char* kind, std::size_t before) {
    std::vector<bool> of_kind(device.stacks.size());
    for (std::size_t i = 0; i < of_kind.size(); ++i) {
        const std::uint32_t named = device.stacks[i].kind;
        of_kind[i] = named < device.names.size() && device.names[named] == kind;
    }
    for (const SnapshotTraceChange& change : device.changes) {
        if (change.event >= before) {
            break;
        }
        if (change.what == SnapshotTraceChange::What::Alloc && change.stack < of_kind.size() &&
            of_kind[change.stack]) {
            return true;
        }
    }
    return false;
}

// Memory really in use at an out-of-memory: what forward had kept then grows with the batch,
// the rest does not (weights, optimizer state, gradients), so a batch larger than the share of
// the forward's bytes the device had room for cannot fit. An upper bound: forward may not have
// kept all it keeps yet, and before the first update the optimizer's state is still to come.
void advise_smaller_batch(const SnapshotDevice& device, const SnapshotOom& oom,
                          std::vector<SnapshotAdvice>& advice) {
    const SnapshotMoment at_oom = snapshot_moment(device, oom.event);
    const std::int64_t activations = activation_bytes(at_oom.by_kind);
    if (!plausible({oom.reserved, oom.device_free, oom.allocated, oom.requested, activations})) {
        return;
    }
    // Under a limit on the process, the room was the limit: under what was reserved and asked.
    const std::int64_t capacity =
        oom.reserved + (refused_by_process_limit(oom) ? oom.requested : oom.device_free);
    const std::int64_t rest = oom.allocated + oom.requested - activations;
    if (activations <= 0 || rest >= capacity) {
        return;
    }
    const double share = double(capacity - rest) / double(activations);
    if (share >= 1.0) {
        return;
    }
    const int percent = static_cast<int>(share * 100.0);
    const bool state_to_come = !allocated_any(device, kOptimizerStep, oom.event);
    advice.push_back(
        {"a batch under " + std::to_string(percent) + "% of this one",
         "at the out-of-memory, forward had kept " + format_bytes(activations) +
             ", which grows with the batch, beside " + format_bytes(rest) +
             " that does not (the request included), with room for " + format_bytes(capacity) +
             " in all (reserved and free): a batch over " + std::to_string(percent) +
             "% of this one cannot fit. One that fits may need to be smaller still: forward may "
             "not have kept all it keeps by then" +
             (state_to_come ? ", and no optimizer step came before it, so any state the "
                              "optimizer keeps is still to come"
                            : "") +
             ". Gradient accumulation keeps the effective batch."});
}

// Activations that dominate the peak (or the out-of-memory) of a program that trains shrink
// without a smaller batch; in inference (no backward) forward keeps nothing for backward. A
// program trains when its trace has a backward, or the engine's tags say forward's bytes are
// activations (a run that failed in its first forward).
void advise_fewer_activations(const SnapshotDevice& device, const SnapshotMoment& at,
                              const std::string& moment, std::vector<SnapshotAdvice>& advice) {
    const std::int64_t activations = activation_bytes(at.by_kind);
    if (!plausible({activations, at.allocated})) {
        return;
    }
    const bool trains =
        allocated_any(device, kBackward, device.changes.size()) ||
        std::any_of(at.by_line.begin(), at.by_line.end(),
                    [](const SnapshotLine& line) { return line.where == kEngineActivations; });
    if (activations < (device.ooms.empty() ? kActivationBytes : 1) ||
        double(activations) < kActivationShare * double(at.allocated) || !trains) {
        return;
    }
    advice.push_back(
        {"mixed precision or activation checkpointing",
         std::string(moment) + ", forward had kept " + format_bytes(activations) + " (" +
             percent_of(activations, at.allocated) +
             " of what was allocated) for backward: torch.autocast with bfloat16 halves what "
             "matrix products keep, and torch.utils.checkpoint keeps only each checkpointed "
             "block's input, computing the rest again in backward."});
    // Of it, the math attention kernel's weights: the fused kernels keep none of them.
    const std::int64_t weights = bytes_of_kind(at.by_kind, kMathAttentionFallbackKind);
    if (double(weights) >= kMathAttentionShare * double(at.allocated)) {
        advice.push_back(
            {"a fused attention kernel",
             std::string(moment) + ", scaled_dot_product_attention's math kernel had kept " +
                 format_bytes(weights) + " (" + percent_of(weights, at.allocated) +
                 "): each head's attention weights, length by length, for backward. It runs "
                 "where no fused kernel takes the inputs; the flash and memory-efficient ones "
                 "keep none of these. Run the attention under torch.nn.attention.sdpa_kernel("
                 "[SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]): its warnings say "
                 "why each refused (the inputs' dtype, the head size, the mask's type or "
                 "strides)."});
    }
}

}  // namespace

std::vector<SnapshotAdvice> snapshot_advice(const SnapshotDevice& device,
                                            const std::optional<std::string>& alloc_conf) {
    std::vector<SnapshotAdvice> advice;
    constexpr std::int64_t kTooLittle = std::int64_t(1) << 20;  // nothing to act on
    if (device.ooms.empty() && device.peak_allocated < kTooLittle) {
        return advice;
    }
    if (device.index == kPinnedHostIndex) {
        advise_on_pinned_host(device, advice);
    } else if (host_of_a_gpu_run(device)) {
        advise_on_host_of_gpu_run(device, advice);
        return advice;
    } else if (!device.ooms.empty()) {
        const SnapshotOom& oom = device.ooms.back();
        const bool in_use = advise_on_oom(device, oom, alloc_conf, advice) &&
                            plausible({oom.reserved, oom.allocated, oom.requested});
        if (in_use) {
            advise_smaller_batch(device, oom, advice);
            advise_fewer_activations(device, snapshot_moment(device, oom.event),
                                     "at the out-of-memory", advice);
        }
    } else {
        const std::int64_t cached = device.reserved_at_peak - device.peak_allocated;
        const bool worth = cached >= kCachedBytes &&
                           double(cached) >= kCachedShare * double(device.reserved_at_peak);
        AllocatorReplays replays(device, alloc_conf);
        const allocator::WhatIf* const expandable = worth ? replays.expandable() : nullptr;
        // With a trace, advised where the replay with it reserves at least a tenth less;
        // without one (segments only), on the cached share alone.
        const bool helps =
            expandable ? 10 * expandable->peak_reserved <= 9 * replays.recorded()->peak_reserved
                       : device.changes.empty();
        if (worth && helps && !expandable_on(alloc_conf)) {
            advice.push_back(
                {expandable_setting(device, alloc_conf),
                 std::string("at ") + peak_moment(device) + ", " + format_bytes(cached) +
                     " of the " + format_bytes(device.reserved_at_peak) + " reserved (" +
                     percent_of(cached, device.reserved_at_peak) +
                     ") held no tensor: memory other programs on the device, or a "
                     "larger batch, could use. Expandable segments keep less "
                     "cached" +
                     (expandable ? ": " + replayed(device, *replays.recorded(), *expandable) + "."
                                 : "; torch.cuda.empty_cache() between phases returns "
                                   "it.")});
        }
        advise_fewer_activations(device, snapshot_moment(device, device.peak_event),
                                 std::string("at ") + peak_moment(device), advice);
    }
    bool told_how_to_record_lines = false;
    for (const SnapshotLine& line : device.at_peak) {
        if (allocated_unrecorded(line.where)) {
            if (double(line.bytes) >= kUntracedShare * double(device.peak_allocated)) {
                const bool late = line.where == kAllocatedBeforeTrace;
                advice.push_back(
                    {"record the history from the start",
                     format_bytes(line.bytes) + " of the " + format_bytes(device.peak_allocated) +
                         " alive at " + peak_moment(device) + " (" +
                         percent_of(line.bytes, device.peak_allocated) + ") was allocated " +
                         (late ? "before the trace began" : "while the history was off") +
                         ", so no line can be named for it: " +
                         (device.from_trace
                              ? "start the profiler (or its schedule's active steps) before "
                                "the model is built (and an optimizer, in training)" +
                                    std::string(device.index >= 0
                                                    ? ", or record a memory snapshot instead "
                                                      "(torch.cuda.memory._record_memory_"
                                                      "history())."
                                                    : ".")
                              : "call torch.cuda.memory._record_memory_history() before the "
                                "model is built (and an optimizer, in training).")});
            }
        } else if (double(line.bytes) < kLineShare * double(device.peak_allocated)) {
            continue;
        } else if (line.where == kNoPythonFrame ||
                   (device.from_trace && line.where.rfind(kNoPythonFrame, 0) == 0)) {
            if (told_how_to_record_lines) {
                continue;
            }
            told_how_to_record_lines = true;  // once, for the largest such line
            advice.push_back(
                {"record the Python lines",
                 format_bytes(line.bytes) + " alive at " + peak_moment(device) + " (" +
                     percent_of(line.bytes, device.peak_allocated) +
                     ") has no Python frame on record, so no line of the program can be named "
                     "for it: " +
                     (device.from_trace
                          ? std::string("profile with torch.profiler.profile(profile_memory=True, "
                                        "with_stack=True).")
                          : std::string("record the history with "
                                        "torch.cuda.memory._record_memory_history(stacks="
                                        "\"python\") (or stacks=\"all\" for C++ frames too)."))});
        } else {
            advice.push_back(
                {"start with " + line.where,
                 "it holds " + format_bytes(line.bytes) + " at " + peak_moment(device) + " (" +
                     percent_of(line.bytes, device.peak_allocated) + " of what is allocated) in " +
                     std::to_string(line.blocks) + (line.blocks == 1 ? " block" : " blocks") + "." +
                     (line.where.rfind(kNoPythonFrame, 0) == 0
                          ? " Its C++ frames name the op: no Python frame was on "
                            "the stack (autograd's engine runs backward in a "
                            "thread of its own)."
                          : "")});
        }
    }
    return advice;
}

}  // namespace oomlab
