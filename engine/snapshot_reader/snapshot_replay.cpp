// Replaying a device's changes: the start state, the timeline, the peak, the state after any
// event, whatever recorded the changes (a snapshot's trace, a profiler's memory events).
#include "snapshot_replay.h"

#include <algorithm>

#include "live_allocations.h"
#include "oomlab/allocator/caching_allocator_model.h"
#include "oomlab/common/format.h"
#include "oomlab/common/utf8.h"
#include "snapshot_fields.h"
#include "snapshot_stages.h"

namespace oomlab {
namespace {

constexpr std::size_t kLinesShown = 10;
constexpr std::size_t kTimelinePoints = 2000;

// What no frame names is said as the file allows: a trace began late, or (no trace) its
// blocks were allocated while the history was off.
const char* unrecorded_line(const SnapshotDevice& device) {
    return device.events == 0 && !device.from_trace ? kAllocatedWhileHistoryOff
                                                    : kAllocatedBeforeTrace;
}

// Groups what is alive by name (source line, kind or metadata; `groups` numbered as `names`),
// largest first, with `also` (a group named apart) among them; what no frame names
// (`unrecorded` bytes) under a line of its own.
std::vector<SnapshotLine> grouped(const SnapshotDevice& device,
                                  const std::vector<SnapshotLine>& groups, std::int64_t unrecorded,
                                  const SnapshotLine& also = {}) {
    std::vector<SnapshotLine> list;
    if (also.blocks > 0) {
        list.push_back(also);
    }
    for (std::size_t name = 0; name < groups.size(); ++name) {
        if (groups[name].blocks > 0) {
            list.push_back(groups[name]);
            list.back().where = device.names[name];
        }
    }
    if (unrecorded > 0) {
        list.push_back({unrecorded_line(device), unrecorded, 0});
    }
    std::stable_sort(list.begin(), list.end(), [](const SnapshotLine& a, const SnapshotLine& b) {
        return a.bytes > b.bytes;
    });
    list.resize(std::min(list.size(), kLinesShown));
    return list;
}

std::string count_of(std::size_t count, const char* one, const char* many) {
    return std::to_string(count) + " " + (count == 1 ? one : many);
}

// A trace that does not add up, made consistent by one rule: a free is of what its address
// holds (its size, else memory allocated before the trace began), an allocation at an address
// in use frees what was there (the trace lost that free). What was found is said; each
// allocation learns the event that frees it; returns the bytes freed that the trace never
// allocated, which were there at its start. One pass in order, keeping what is alive.
std::int64_t make_consistent(SnapshotDevice& device) {
    using What = SnapshotTraceChange::What;
    // The changes stay where they are until the pass ends: the live set points at them.
    snapshot::LiveAllocations<SnapshotTraceChange> live;
    std::size_t early_frees = 0;
    std::int64_t early_bytes = 0;
    std::size_t resized = 0;
    std::vector<std::pair<std::size_t, std::int64_t>> lost_frees;  // before change, its size
    // The change whose slot is fetched while this one is taken: far enough ahead for memory to
    // answer, near enough that the slot is still cached when its turn comes.
    constexpr std::size_t kAhead = 16;
    auto ahead = device.changes.begin() + std::ptrdiff_t(std::min(kAhead, device.changes.size()));
    std::size_t index = 0;
    for (auto it = device.changes.begin(); it != device.changes.end(); ++it, ++index) {
        if (ahead != device.changes.end()) {
            live.prefetch((ahead++)->address);
        }
        SnapshotTraceChange& change = *it;
        if (change.what != What::Alloc && change.what != What::Free) {
            continue;
        }
        auto* alive = live.find(change.address);
        if (change.what == What::Alloc) {
            if (!alive) {
                live.add(change.address, &change, change.size);
                continue;
            }
            lost_frees.emplace_back(index, alive->size);
            alive->change->freed = change.event;
            *alive = {change.address, &change, change.size};
        } else if (!alive) {
            ++early_frees;
            // Frees of allocations never seen, however many, count up to what the reader
            // counts at most: each within 1 PiB, the sum never overflows.
            early_bytes = std::min(early_bytes + change.size, snapshot::kMostTotalBytes);
        } else {
            resized += alive->size != change.size;
            change.size = alive->size;
            alive->change->freed = change.event;
            live.erase(alive);
        }
    }
    if (!lost_frees.empty()) {  // each lost free put back, before its allocation
        std::deque<SnapshotTraceChange> changes;
        auto lost = lost_frees.begin();
        for (std::size_t i = 0; i < device.changes.size(); ++i) {
            for (; lost != lost_frees.end() && lost->first == i; ++lost) {
                SnapshotTraceChange free = device.changes[i];
                free.what = What::Free;
                free.size = lost->second;
                free.freed = SnapshotTraceChange::kNeverFreed;
                changes.push_back(free);
            }
            changes.push_back(device.changes[i]);
        }
        device.changes = std::move(changes);
    }
    if (early_frees > 0) {
        device.trace_problems.push_back(
            count_of(early_frees, "free", "frees") +
            " of memory allocated before the trace began (" + format_bytes(early_bytes) + "): " +
            (device.from_trace ? "the profiler started after it was allocated"
                               : "the history starts late, or its ring buffer "
                                 "(max_entries) dropped the oldest events") +
            "; that memory is shown as allocated before the trace");
    }
    if (!lost_frees.empty()) {
        device.trace_problems.push_back(
            count_of(lost_frees.size(), "allocation", "allocations") +
            " at an address already in use with no free between (the trace lost frees, or "
            "repeats itself): each is taken to free what was there");
    }
    if (resized > 0) {
        device.trace_problems.push_back(count_of(resized, "free", "frees") +
                                        " of another size than the allocation it frees: the "
                                        "allocation's size is taken");
    }
    return early_bytes;
}

// A trace whose allocations or segments would add up past what the reader counts
// (kMostTotalBytes, 1 EiB: more than any machine holds) is followed up to the change that
// would; the rest is dropped, and said so. Each size is within 1 PiB, so no sum overflows.
void stop_past_any_machine(SnapshotDevice& device) {
    using What = SnapshotTraceChange::What;
    std::int64_t allocated = 0;
    std::int64_t reserved = 0;
    for (std::size_t i = 0; i < device.changes.size(); ++i) {
        const SnapshotTraceChange& change = device.changes[i];
        std::int64_t& total =
            change.what == What::Alloc || change.what == What::Free ? allocated : reserved;
        total +=
            change.what == What::Alloc || change.what == What::Reserve ? change.size : -change.size;
        if (total > snapshot::kMostTotalBytes || total < -snapshot::kMostTotalBytes) {
            device.trace_problems.push_back(
                "event " + std::to_string(change.event) + ": the trace's " +
                (&total == &allocated ? "allocations" : "segments") +
                " add up past 1 EiB there, more than any machine holds: it is followed up to "
                "that event, the " +
                std::to_string(device.changes.size() - i) + " changes after it are left out");
            device.changes.resize(i);
            return;
        }
    }
}

// How a figure moves over the trace: its net change and its lowest point, from zero.
struct Moves {
    std::int64_t net = 0;
    std::int64_t lowest = 0;

    void add(std::int64_t move) {
        net += move;
        lowest = std::min(lowest, net);
    }
};

// The start of a figure that `moves` move: the end less their net change, raised when some
// moment would go below zero (or below `floor`), with what was raised said.
std::int64_t start_of(std::int64_t end, const Moves& moves, std::int64_t floor, const char* figure,
                      std::vector<std::string>& problems) {
    const std::int64_t start = end - moves.net;
    const std::int64_t least = std::max(-moves.lowest, floor);
    if (start >= least) {
        return start;
    }
    problems.push_back("the trace leaves " + format_bytes(least - start) + " more " + figure +
                       " than the segments dumped at the end hold: frees after its last event are "
                       "missing (a trace cut short, or segments dumped at another moment), so it "
                       "starts from the least that keeps every moment at or above zero");
    return least;
}

}  // namespace

namespace snapshot {

NameTable::NameTable(SnapshotDevice& device) : m_names(device.names), m_stacks(device.stacks) {
    for (std::size_t i = 0; i < m_names.size(); ++i) {
        m_ids.emplace(m_names[i], std::uint32_t(i));
    }
    for (std::size_t i = 0; i < m_stacks.size(); ++i) {
        const SnapshotStack& stack = m_stacks[i];
        if (stack.metadata == SnapshotStack::kNoMetadata) {
            m_stack_ids.emplace(std::uint64_t(stack.line) << 32 | stack.kind, std::uint32_t(i));
        } else {
            m_labelled_stack_ids.emplace(std::tuple(stack.line, stack.kind, stack.metadata),
                                         std::uint32_t(i));
        }
    }
}

std::uint32_t NameTable::id(std::string name) {
    // Names come from the file (frames' file names, categories, metadata): a control
    // character in one (a clear screen, a terminal title) is shown as '?', never sent as is.
    name = printable_line(name);
    const auto [at, added] = m_ids.emplace(name, std::uint32_t(m_names.size()));
    if (added) {
        m_names.push_back(std::move(name));
    }
    return at->second;
}

std::uint32_t NameTable::stack(std::string line, std::string kind, const std::string& metadata) {
    SnapshotStack named{id(std::move(line)), id(std::move(kind))};
    const auto number = std::uint32_t(m_stacks.size());
    bool added = false;
    std::uint32_t at = 0;
    if (metadata.empty()) {
        const auto found =
            m_stack_ids.emplace(std::uint64_t(named.line) << 32 | named.kind, number);
        added = found.second;
        at = found.first->second;
    } else {
        named.metadata = id(metadata);
        const auto found = m_labelled_stack_ids.emplace(
            std::tuple(named.line, named.kind, named.metadata), number);
        added = found.second;
        at = found.first->second;
    }
    if (added) {
        m_stacks.push_back(named);
    }
    return at;
}

void replay_changes(SnapshotDevice& device, const SnapshotProgress& progress) {
    using What = SnapshotTraceChange::What;
    stop_past_any_machine(device);
    const std::int64_t early_frees = make_consistent(device);
    // The state at the start: the end state less what the trace did, and never below zero.
    Moves allocations;
    Moves reservations;
    for (const SnapshotTraceChange& change : device.changes) {
        if (change.what == What::Alloc || change.what == What::Free) {
            allocations.add(change.what == What::Alloc ? change.size : -change.size);
        } else {
            reservations.add(change.what == What::Reserve ? change.size : -change.size);
        }
    }
    if (!device.segments_dumped) {  // no end but the trace's: it starts from the least it can
        device.allocated = std::max(-allocations.lowest, early_frees) + allocations.net;
        device.reserved = std::max<std::int64_t>(-reservations.lowest, 0) + reservations.net;
        // Rows of tensors alone (export_memory_timeline's) say nothing of segments.
        device.reserved_recorded = std::any_of(
            device.changes.begin(), device.changes.end(), [](const SnapshotTraceChange& change) {
                return change.what != What::Alloc && change.what != What::Free;
            });
        // Cached free as a trace tells it: reserved less allocated, no blocks to say in what.
        device.cached_free = device.reserved_recorded
                                 ? std::max<std::int64_t>(device.reserved - device.allocated, 0)
                                 : 0;
    }
    std::int64_t allocated =
        start_of(device.allocated, allocations, early_frees, "allocated", device.trace_problems);
    std::int64_t reserved =
        start_of(device.reserved, reservations, 0, "reserved", device.trace_problems);
    // Nothing reserved at the start (every segment opened inside the trace): nothing allocated
    // either. What the end's blocks hold beyond the trace's net is the allocator's rounding of
    // the sizes the trace records (what was asked: 2 B is a block of 512 B), not memory from
    // before it.
    const bool segments_traced =
        std::any_of(device.changes.begin(), device.changes.end(),
                    [](const SnapshotTraceChange& change) { return change.what == What::Reserve; });
    if (segments_traced && reserved == 0 && early_frees == 0) {
        allocated = std::max<std::int64_t>(-allocations.lowest, 0);
    }
    device.peak_allocated = allocated;
    device.peak_reserved = reserved;
    device.reserved_at_peak = reserved;
    device.peak_event = 0;
    // A timeline of at most about kTimelinePoints points (every event of a short trace), the
    // peak and every out-of-memory event among them.
    const std::size_t stride = std::max<std::size_t>(1, device.events / kTimelinePoints);
    device.timeline.push_back({0, allocated, reserved});
    snapshot::StagePeaks stage_peaks(device);
    stage_peaks.at(0, allocated, reserved);
    auto change = device.changes.begin();
    auto oom = device.ooms.begin();
    std::size_t to_point = stride;  // events until the timeline's next point
    for (std::size_t i = 0; i < device.events; ++i) {
        report_stage(progress, "replaying", i, device.events);
        for (; change != device.changes.end() && change->event == i; ++change) {
            allocated += change->what == What::Alloc  ? change->size
                         : change->what == What::Free ? -change->size
                                                      : 0;
            reserved += change->what == What::Reserve   ? change->size
                        : change->what == What::Release ? -change->size
                                                        : 0;
        }
        const bool out_of_memory = oom != device.ooms.end() && oom->event == i;
        if (out_of_memory) {
            oom->allocated = allocated;
            oom->reserved = reserved;
            ++oom;
        }
        if (allocated > device.peak_allocated) {
            device.peak_allocated = allocated;
            device.reserved_at_peak = reserved;
            device.peak_event = i + 1;
        }
        if (--to_point == 0 || i + 1 == device.events || out_of_memory) {
            device.timeline.push_back({i + 1, allocated, reserved});
        }
        if (to_point == 0) {
            to_point = stride;
        }
        if (reserved > device.peak_reserved) {
            device.peak_reserved = reserved;
            device.peak_reserved_event = i + 1;
        }
        stage_peaks.at(i + 1, allocated, reserved);
    }
    const SnapshotPoint peak{device.peak_event, device.peak_allocated, device.reserved_at_peak};
    const auto at = std::lower_bound(
        device.timeline.begin(), device.timeline.end(), peak,
        [](const SnapshotPoint& a, const SnapshotPoint& b) { return a.event < b.event; });
    if (at == device.timeline.end() || at->event != peak.event) {
        device.timeline.insert(at, peak);
    }
    if (device.events == 0) {
        device.peak_allocated = device.allocated;
        device.peak_reserved = device.reserved;
        device.peak_reserved_event = 0;
        device.reserved_at_peak = device.reserved;
    }
    SnapshotMoment at_peak = snapshot_moment(device, device.peak_event);
    device.at_peak = std::move(at_peak.by_line);
    device.at_peak_by_kind = std::move(at_peak.by_kind);
    device.at_peak_by_metadata = std::move(at_peak.by_metadata);
}

}  // namespace snapshot

SnapshotMoment snapshot_moment(const SnapshotDevice& device, std::size_t event) {
    using What = SnapshotTraceChange::What;
    SnapshotMoment moment;
    moment.event = std::min(event, device.events);
    if (device.timeline.empty()) {  // no replay: the end state, with nothing traced
        moment.allocated = device.allocated;
        moment.reserved = device.reserved;
        moment.by_line = moment.by_kind = grouped(device, {}, device.allocated);
        return moment;
    }
    moment.allocated = device.timeline.front().allocated;
    moment.reserved = device.timeline.front().reserved;
    // What is alive then: each allocation before it, freed at it or after.
    // A snapshot's trace records what each request asked for; its block is the allocator's
    // rounding of it (a profiler's trace records the block, a CPU's allocator rounds nothing).
    const bool rounds = served_by_caching_allocator(device) && !device.from_trace;
    const auto block_of = [](std::int64_t asked) {
        using allocator::kMinBlockSize;
        return std::max(kMinBlockSize, (asked + kMinBlockSize - 1) / kMinBlockSize * kMinBlockSize);
    };
    std::vector<SnapshotLine> lines(device.names.size());
    std::vector<SnapshotLine> kinds(device.names.size());
    std::vector<SnapshotLine> labels(device.names.size());
    SnapshotLine unlabelled{"(no metadata set)", 0, 0};
    std::int64_t traced = 0;
    for (const SnapshotTraceChange& change : device.changes) {
        if (change.event >= moment.event) {
            break;
        }
        switch (change.what) {
            case What::Alloc:
                moment.allocated += change.size;
                if (change.freed >= moment.event && change.stack < device.stacks.size()) {
                    const SnapshotStack& stack = device.stacks[change.stack];
                    SnapshotLine* label = stack.metadata == SnapshotStack::kNoMetadata
                                              ? &unlabelled
                                              : &labels[stack.metadata];
                    for (SnapshotLine* group : {&lines[stack.line], &kinds[stack.kind], label}) {
                        group->bytes += change.size;
                        group->block_bytes += rounds ? block_of(change.size) : 0;
                        ++group->blocks;
                    }
                    traced += change.size;
                }
                break;
            case What::Free:
                moment.allocated -= change.size;
                break;
            case What::Reserve:
                moment.reserved += change.size;
                break;
            case What::Release:
                moment.reserved -= change.size;
                break;
        }
    }
    for (const SnapshotHeldBlock& held : device.held_from_start) {
        if (held.stack >= device.stacks.size() || traced + held.size > moment.allocated) {
            continue;
        }
        const SnapshotStack& stack = device.stacks[held.stack];
        for (SnapshotLine* group : {&lines[stack.line], &kinds[stack.kind], &unlabelled}) {
            group->bytes += held.size;
            group->block_bytes += rounds ? held.size : 0;  // a block's own size
            ++group->blocks;
        }
        traced += held.size;
    }
    moment.by_line = grouped(device, lines, moment.allocated - traced);
    moment.by_kind = grouped(device, kinds, moment.allocated - traced);
    if (std::any_of(device.stacks.begin(), device.stacks.end(), [](const SnapshotStack& stack) {
            return stack.metadata != SnapshotStack::kNoMetadata;
        })) {
        moment.by_metadata = grouped(device, labels, moment.allocated - traced, unlabelled);
    }
    return moment;
}

}  // namespace oomlab
