// A recorded allocator trace (a CUDA memory snapshot's, torch-free) replayed through the model:
// following it, to measure how often the model opens the segments the real allocator opened
// (fidelity), or freely under other settings (what if).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "oomlab/allocator/allocator_settings.h"
#include "oomlab/allocator/caching_allocator_model.h"

namespace oomlab::allocator {

struct TraceEvent {
    enum class Kind { Alloc, Free, SegmentAlloc, SegmentFree, SegmentMap, SegmentUnmap, Oom };
    Kind kind = Kind::Alloc;
    std::size_t index = 0;  // in the recorded trace, all its actions counted
    std::int64_t address = 0;
    std::int64_t size = 0;  // an allocation's and an OOM's: the bytes asked for
    std::int64_t stream = 0;
};

// A segment before the trace's first event, or, expandable, a range of its pages mapped then.
struct TraceSegment {
    std::int64_t address = 0;
    std::int64_t size = 0;
    std::int64_t stream = 0;
    bool expandable = false;
    std::optional<bool> small;  // the pool of expandable pages, where the snapshot says
    struct Held {
        std::int64_t address = 0;
        std::int64_t size = 0;
    };
    std::vector<Held> allocated;
};

struct AllocatorTrace {
    AllocatorSettings settings;        // what the recording program ran with
    std::vector<TraceSegment> before;  // the segments before the first event, when it began late
    std::vector<TraceEvent> events;
    // The streams of private pools still held at the end: their cached segments are never
    // released (CachingAllocatorModel::hold_cache_of).
    std::vector<std::int64_t> held_streams;
};

struct FidelityMiss {
    std::size_t event = 0;      // the allocation's index in the trace
    std::int64_t request = 0;   // its size
    std::int64_t recorded = 0;  // the segment it opened (mapped) there; 0: none
    std::int64_t modelled = 0;  // the model's; 0: none
};

struct Fidelity {
    std::int64_t segment_allocs_recorded = 0;
    std::int64_t segment_allocs_modelled = 0;
    std::int64_t agreed = 0;  // the same request opened a segment of the same size
    std::int64_t allocations = 0;
    std::int64_t blocks_agreed = 0;  // allocations served from the block the model chose
    std::int64_t not_placed = 0;     // allocations the model held no free block for
    std::vector<FidelityMiss> misses;
};

Fidelity check_fidelity(const AllocatorTrace& trace);

struct OomOutcome {
    std::size_t event = 0;
    std::int64_t request = 0;
    bool happens = true;  // under the settings replayed
    // Where it happens: the request's pool as the failure left it (after the release of the
    // cached segments and the retry), and the whole of what was reserved.
    ModelStats at_failure;
};

struct WhatIf {
    std::int64_t capacity = 0;  // 0: none
    std::int64_t peak_reserved = 0;
    std::int64_t peak_allocated = 0;  // the most allocated at any time, as the model rounds it
    // At the most reserved (where it was so more than once, the moment the most was allocated
    // of those): what was allocated, and the event after which it was.
    std::int64_t allocated_at_peak = 0;
    std::size_t peak_event = 0;
    std::int64_t segments_at_peak = 0;
    std::int64_t reserved_at_end = 0;
    std::optional<std::size_t> first_over_capacity;  // where reserved would pass it
    std::vector<OomOutcome> ooms;
    std::int64_t failed_allocations = 0;  // the trace's allocations the replay could not serve
    // Reserved after each event, about `points` of them, for a plot.
    std::vector<std::pair<std::size_t, std::int64_t>> reserved_line;
};

// Replays the trace's requests under `settings` with `capacity` bytes (0: unlimited), the
// program's own empty_cache() calls (releases no allocation follows) kept.
WhatIf replay_under(const AllocatorTrace& trace, const AllocatorSettings& settings,
                    std::int64_t capacity, std::size_t points = 2000);

}  // namespace oomlab::allocator
