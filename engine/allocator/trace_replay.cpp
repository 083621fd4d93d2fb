#include "oomlab/allocator/trace_replay.h"

#include <algorithm>
#include <unordered_map>

#include "oomlab/allocator/caching_allocator_model.h"

namespace oomlab::allocator {
namespace {

using Kind = TraceEvent::Kind;
constexpr std::size_t kMostMissesListed = 1000;

bool changes_segments(Kind kind) {
    return kind == Kind::SegmentAlloc || kind == Kind::SegmentFree || kind == Kind::SegmentMap ||
           kind == Kind::SegmentUnmap;
}

// The segments a trace's events begin with, as the model holds them.
void start_from(CachingAllocatorModel& model, const AllocatorTrace& trace) {
    for (const std::int64_t stream : trace.held_streams) {
        model.hold_cache_of(stream);
    }
    for (const TraceSegment& segment : trace.before) {
        if (segment.expandable) {
            model.map_pages(segment.address, segment.size, segment.stream, segment.small);
        } else {
            model.open_segment(segment.address, segment.size, segment.stream);
        }
        for (const TraceSegment::Held& held : segment.allocated) {
            model.mark_allocated(held.address, held.size);
        }
    }
}

// Segment changes come in runs. A run right before an allocation (or an out-of-memory error)
// is that request's: the allocator released and opened segments to serve it. Any other run is
// the program's own (torch.cuda.empty_cache()).
struct SegmentRun {
    std::size_t end = 0;       // the first event after it
    bool for_request = false;  // followed by an allocation or an OOM
    std::int64_t opened = 0;   // bytes of segments opened or pages mapped in it
    bool releases = false;     // it frees segments or unmaps pages
};

SegmentRun run_at(const std::vector<TraceEvent>& events, std::size_t start) {
    SegmentRun run;
    run.end = start;
    while (run.end < events.size() && changes_segments(events[run.end].kind)) {
        const TraceEvent& event = events[run.end];
        if (event.kind == Kind::SegmentAlloc || event.kind == Kind::SegmentMap) {
            run.opened += event.size;
        } else {
            run.releases = true;
        }
        ++run.end;
    }
    run.for_request = run.end < events.size() &&
                      (events[run.end].kind == Kind::Alloc || events[run.end].kind == Kind::Oom);
    return run;
}

// `small`: the pool of the request a run of segment changes served, when it served one.
void apply(CachingAllocatorModel& model, const TraceEvent& event,
           std::optional<bool> small = std::nullopt) {
    switch (event.kind) {
        case Kind::SegmentAlloc:
            model.open_segment(event.address, event.size, event.stream);
            break;
        case Kind::SegmentMap:
            model.map_pages(event.address, event.size, event.stream, small);
            break;
        case Kind::SegmentFree:
        case Kind::SegmentUnmap:
            model.release(event.address, event.size);
            break;
        case Kind::Free:
            model.free(event.address);
            break;
        case Kind::Alloc:
        case Kind::Oom:
            break;
    }
}

}  // namespace

Fidelity check_fidelity(const AllocatorTrace& trace) {
    CachingAllocatorModel model(trace.settings);
    start_from(model, trace);
    Fidelity fidelity;
    const std::vector<TraceEvent>& events = trace.events;
    const auto judge = [&](const TraceEvent& request, std::int64_t recorded) {
        const SegmentNeed modelled = model.need(request.size, request.stream);
        ++fidelity.allocations;
        fidelity.segment_allocs_recorded += recorded > 0;
        fidelity.segment_allocs_modelled += modelled.opens;
        if (recorded > 0 && modelled.opens && modelled.bytes == recorded) {
            ++fidelity.agreed;
        } else if (recorded > 0 || modelled.opens) {
            if (fidelity.misses.size() < kMostMissesListed) {
                fidelity.misses.push_back(
                    {request.index, request.size, recorded, modelled.opens ? modelled.bytes : 0});
            }
        } else if (model.best_fit(request.size, request.stream) == request.address) {
            ++fidelity.blocks_agreed;
        }
    };
    for (std::size_t i = 0; i < events.size();) {
        if (changes_segments(events[i].kind)) {
            const SegmentRun run = run_at(events, i);
            if (run.for_request && events[run.end].kind == Kind::Alloc) {
                judge(events[run.end], run.opened);  // before the run changes anything
            }
            std::optional<bool> small;
            if (run.for_request) {
                small = CachingAllocatorModel::is_small(model.round_size(events[run.end].size));
            }
            for (; i < run.end; ++i) {
                apply(model, events[i], small);
            }
            if (run.for_request && events[i].kind == Kind::Alloc) {
                fidelity.not_placed +=
                    !model.place(events[i].address, events[i].size, events[i].stream);
                ++i;
            }
            continue;
        }
        const TraceEvent& event = events[i];
        if (event.kind == Kind::Alloc) {
            judge(event, 0);
            fidelity.not_placed += !model.place(event.address, event.size, event.stream);
        } else {
            apply(model, event);
        }
        ++i;
    }
    return fidelity;
}

WhatIf replay_under(const AllocatorTrace& trace, const AllocatorSettings& settings,
                    std::int64_t capacity, std::size_t points) {
    CachingAllocatorModel model(settings, capacity);
    start_from(model, trace);
    WhatIf result;
    result.capacity = capacity;
    std::unordered_map<std::int64_t, std::int64_t> placed;  // the trace's address: the model's
    for (const TraceSegment& segment : trace.before) {
        for (const TraceSegment::Held& held : segment.allocated) {
            placed[held.address] = held.address;
        }
    }
    const std::vector<TraceEvent>& events = trace.events;
    const std::size_t stride =
        std::max<std::size_t>(1, events.size() / std::max<std::size_t>(points, 1));
    const auto note = [&](std::size_t index, bool served) {
        if (!served && !result.first_over_capacity) {
            result.first_over_capacity = index;
        }
        result.peak_allocated = std::max(result.peak_allocated, model.allocated());
        // Of the moments at the most reserved, the one with the most allocated: where reserved
        // stays flat (every request fits the segments held before the trace), what held no
        // tensor at its peak is told where the program needed the most, not at the first event.
        if (model.reserved() > result.peak_reserved ||
            (model.reserved() == result.peak_reserved &&
             model.allocated() > result.allocated_at_peak)) {
            result.peak_reserved = model.reserved();
            result.allocated_at_peak = model.allocated();
            result.peak_event = index;
            result.segments_at_peak = model.stats().segments;
        }
        if (index % stride == 0) {
            result.reserved_line.emplace_back(index, model.reserved());
        }
    };
    for (std::size_t i = 0; i < events.size();) {
        const TraceEvent& event = events[i];
        if (changes_segments(event.kind)) {
            const SegmentRun run = run_at(events, i);
            // A request's run is redone by the model where it runs out of room. With no
            // capacity it never does, so a release recorded before a request is kept: it was the
            // program's empty_cache() (a CUDA graph's capture calls it right before its first
            // allocation) or the allocator's under a limit the trace does not show.
            if (!run.for_request || (capacity == 0 && run.releases)) {
                model.empty_cache();  // the program's call; the allocator's own runs it redoes
                note(event.index, true);
            }
            i = run.end;
            continue;
        }
        bool served = true;
        if (event.kind == Kind::Alloc) {
            if (const auto address = model.allocate(event.size, event.stream)) {
                placed[event.address] = *address;
            } else {
                served = false;
                ++result.failed_allocations;
            }
        } else if (event.kind == Kind::Free) {
            if (const auto found = placed.find(event.address); found != placed.end()) {
                model.free(found->second);
                placed.erase(found);
            }
        } else if (event.kind == Kind::Oom) {
            // The request that failed: served now, it is given back at once, as the program
            // went on without it.
            const auto address = model.allocate(event.size, event.stream);
            result.ooms.push_back({event.index, event.size, !address, model.stats_for(event.size)});
            if (address) {
                model.free(*address);
            }
            served = bool(address);
        }
        note(event.index, served);
        ++i;
    }
    result.reserved_at_end = model.reserved();
    return result;
}

}  // namespace oomlab::allocator
