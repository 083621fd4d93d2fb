#include "oomlab/snapshot_reader/snapshot_whatif.h"

#include <cstdlib>

#include <algorithm>
#include <iterator>
#include <map>
#include <unordered_set>

#include "oomlab/allocator/allocator_settings.h"
#include "oomlab/common/errors.h"
#include "pool_streams.h"

namespace oomlab {
namespace {

using allocator::TraceEvent;
using Kind = TraceEvent::Kind;

Kind kind_of(const SnapshotTraceChange& change) {
    using What = SnapshotTraceChange::What;
    switch (change.what) {
        case What::Alloc:
            return Kind::Alloc;
        case What::Free:
            return Kind::Free;
        case What::Reserve:
            return change.pages ? Kind::SegmentMap : Kind::SegmentAlloc;
        case What::Release:
            return change.pages ? Kind::SegmentUnmap : Kind::SegmentFree;
    }
    return Kind::Alloc;
}

// Pages of expandable segments, as ranges [from, to) with their stream and pool.
class PageRanges {
public:
    struct Range {
        std::int64_t to = 0;
        std::int64_t stream = 0;
        std::optional<bool> small;
    };

    void add(std::int64_t from, std::int64_t to, std::int64_t stream, std::optional<bool> small) {
        remove(from, to);
        auto at = m_ranges.emplace(from, Range{to, stream, small}).first;
        // Joined with a neighbour it touches: one mapped range, as the snapshot would list it.
        if (const auto next = std::next(at);
            next != m_ranges.end() && next->first == to && next->second.stream == stream) {
            at->second.to = next->second.to;
            m_ranges.erase(next);
        }
        if (at != m_ranges.begin()) {
            const auto previous = std::prev(at);
            if (previous->second.to == from && previous->second.stream == stream) {
                previous->second.to = at->second.to;
                m_ranges.erase(at);
            }
        }
    }

    void remove(std::int64_t from, std::int64_t to) {
        auto at = m_ranges.lower_bound(from);
        if (at != m_ranges.begin() && std::prev(at)->second.to > from) {
            --at;
        }
        while (at != m_ranges.end() && at->first < to) {
            const std::int64_t start = at->first;
            const Range range = at->second;
            at = m_ranges.erase(at);
            if (start < from) {
                m_ranges.emplace(start, Range{from, range.stream, range.small});
            }
            if (range.to > to) {
                at = m_ranges.emplace(to, Range{range.to, range.stream, range.small}).first;
                ++at;
            }
        }
    }

    const std::map<std::int64_t, Range>& ranges() const { return m_ranges; }

private:
    std::map<std::int64_t, Range> m_ranges;  // by where they start
};

// The pages of expandable segments mapped when the trace began: those mapped at the end, with
// each of the trace's maps and unmaps undone, the last first.
PageRanges expandable_pages_before(const SnapshotDevice& device) {
    PageRanges pages;
    for (const SnapshotSegmentLayout& segment : device.layout) {
        if (segment.expandable) {
            pages.add(segment.address, segment.address + segment.size, segment.stream,
                      segment.small);
        }
    }
    for (auto change = device.changes.rbegin(); change != device.changes.rend(); ++change) {
        if (!change->pages) {
            continue;
        }
        if (change->what == SnapshotTraceChange::What::Reserve) {
            pages.remove(change->address, change->address + change->size);
        } else if (change->what == SnapshotTraceChange::What::Release) {
            pages.add(change->address, change->address + change->size, change->stream,
                      std::nullopt);
        }
    }
    return pages;
}

// What existed before the first event: segments the trace did not open (those it released
// without opening, and those left at the end) and the pages of expandable segments mapped
// then, holding what it freed without allocating and what was still allocated at the end
// without its allocation in the trace.
std::vector<allocator::TraceSegment> before_trace(const SnapshotDevice& device) {
    std::unordered_set<std::int64_t> opened;
    std::unordered_set<std::int64_t> allocated;
    std::vector<allocator::TraceSegment> before;
    std::vector<allocator::TraceSegment::Held> held;
    for (const SnapshotTraceChange& change : device.changes) {
        const Kind kind = kind_of(change);
        if (kind == Kind::SegmentAlloc) {
            opened.insert(change.address);
        } else if (kind == Kind::SegmentFree && !opened.count(change.address)) {
            before.push_back(
                {change.address, change.size, device.streams[change.stream], false, {}, {}});
            opened.insert(change.address);
        } else if (kind == Kind::Alloc) {
            allocated.insert(change.address);
        } else if (kind == Kind::Free && !allocated.count(change.address)) {
            held.push_back({change.address, change.size});
            allocated.insert(change.address);
        }
    }
    for (const SnapshotSegmentLayout& segment : device.layout) {
        if (segment.expandable || opened.count(segment.address)) {
            continue;
        }
        before.push_back({segment.address, segment.size, segment.stream, false, {}, {}});
        for (const auto& block : segment.blocks) {
            if (block.allocated && !allocated.count(block.address)) {
                held.push_back({block.address, block.size});
            }
        }
    }
    const PageRanges pages = expandable_pages_before(device);
    for (const auto& [from, range] : pages.ranges()) {
        before.push_back({from, range.to - from, range.stream, true, range.small, {}});
    }
    for (const SnapshotSegmentLayout& segment : device.layout) {
        for (const auto& block : segment.blocks) {
            if (segment.expandable && block.allocated && !allocated.count(block.address)) {
                held.push_back({block.address, block.size});
            }
        }
    }
    for (const allocator::TraceSegment::Held& block : held) {
        for (allocator::TraceSegment& segment : before) {
            if (block.address >= segment.address &&
                block.address + block.size <= segment.address + segment.size) {
                segment.allocated.push_back(block);
                break;
            }
        }
    }
    return before;
}

// The allocator's settings refused in words of their own: the snapshot's recorded settings, or
// --alloc-conf, not an environment variable the user may never have set.
std::string without_variable_name(std::string message) {
    const std::string variable = "PYTORCH_CUDA_ALLOC_CONF: ";
    return message.rfind(variable, 0) == 0 ? message.substr(variable.size()) : message;
}

}  // namespace

allocator::AllocatorTrace allocator_trace(const SnapshotDevice& device,
                                          const allocator::AllocatorSettings& settings) {
    allocator::AllocatorTrace trace;
    trace.settings = settings;
    const snapshot::PoolStreams pools(device);
    trace.held_streams = pools.private_streams();
    trace.before = before_trace(device);
    for (allocator::TraceSegment& segment : trace.before) {
        segment.stream = pools.before_trace(segment.address, segment.stream);
    }
    trace.events.reserve(device.changes.size() + device.ooms.size());
    if (device.from_profile) {
        // A profile's segment is the span of its tensors' addresses, no allocator's: the tensors
        // made before the profile began are asked of the allocator first, in no given segment.
        for (const allocator::TraceSegment& segment : trace.before) {
            for (const allocator::TraceSegment::Held& block : segment.allocated) {
                trace.events.push_back({Kind::Alloc, 0, block.address, block.size, segment.stream});
            }
        }
        trace.before.clear();
    }
    auto oom = device.ooms.begin();
    for (const SnapshotTraceChange& change : device.changes) {
        const std::int64_t stream = pools.of(change);
        for (; oom != device.ooms.end() && oom->event < change.event; ++oom) {
            trace.events.push_back({Kind::Oom, oom->event, 0, oom->requested, stream});
        }
        trace.events.push_back(
            {kind_of(change), change.event, change.address, change.size, stream});
    }
    for (; oom != device.ooms.end(); ++oom) {
        trace.events.push_back({Kind::Oom, oom->event, 0, oom->requested, 0});
    }
    return trace;
}

std::vector<SnapshotWhatIf> snapshot_whatif(const SnapshotReport& report,
                                            const std::optional<std::string>& conf,
                                            std::optional<std::int64_t> device_memory) {
    const std::string recorded_conf = report.alloc_conf.value_or("");
    std::vector<std::string> notes;
    if (!report.alloc_conf_problem.empty()) {
        notes.push_back(report.alloc_conf_problem);
    }
    allocator::AllocatorSettings recorded;
    try {
        recorded = allocator::parse_alloc_conf(recorded_conf);
    } catch (const BadInput& error) {
        notes.push_back("the settings the snapshot recorded (\"" + recorded_conf +
                        "\") are not valid (" + without_variable_name(error.what()) +
                        "): its replay as recorded takes PyTorch's defaults");
    }
    allocator::AllocatorSettings replayed = recorded;
    if (conf) {
        try {
            replayed = allocator::parse_alloc_conf(*conf);
        } catch (const BadInput& error) {
            throw BadInput("--alloc-conf: " + without_variable_name(error.what()));
        }
    }
    for (const std::string& setting : {recorded_conf, conf.value_or(recorded_conf)}) {
        for (std::string& note : allocator::settings_not_replayed(setting)) {
            if (std::find(notes.begin(), notes.end(), note) == notes.end()) {
                notes.push_back(std::move(note));
            }
        }
    }
    std::vector<SnapshotWhatIf> results;
    for (const SnapshotDevice& device : report.devices) {
        if (device.changes.empty() || !served_by_caching_allocator(device)) {
            continue;  // no trace, or no allocator's segments to follow
        }
        SnapshotWhatIf& result = results.emplace_back();
        result.device = device.index;
        result.recorded_conf = recorded_conf;
        result.settings_recorded = report.alloc_conf.has_value();
        result.conf = allocator::to_alloc_conf(replayed);
        result.notes = notes;
        // As `snapshot show` says them: a figure of the program's below is only as good as its
        // trace (one past 1 EiB was printed as the program's own).
        for (const std::string& problem : device.trace_problems) {
            result.notes.push_back("the trace does not add up: " + problem);
        }
        if (const std::size_t pooled = snapshot::PoolStreams(device).private_changes()) {
            result.notes.push_back(
                device.stream_pools.empty()
                    ? std::to_string(pooled) +
                          " of the trace's events fall in a private pool's segments "
                          "(segment_pool_id) and are replayed in that pool, which serves only "
                          "its own requests; the trace names no pool, so a private pool's "
                          "segments released before the snapshot are replayed as the default "
                          "pool's"
                    : std::to_string(pooled) +
                          " of the trace's events name a private pool (pool_id) and are "
                          "replayed in that pool, which serves only its own requests");
        }
        const allocator::AllocatorTrace trace = allocator_trace(device, recorded);
        result.fidelity = allocator::check_fidelity(trace);
        result.segments_recorded = !device.from_trace;
        if (!result.segments_recorded) {
            result.fidelity.misses.clear();  // "recorded none" for each: the trace has none
        }
        std::int64_t capacity = 0;
        if (device_memory) {
            capacity = *device_memory;
            result.capacity_given = true;
            result.capacity_source = "as given";
        } else if (!device.ooms.empty()) {
            // What it reserved at an out-of-memory and the device's free memory then: the most
            // the allocator could have had (the most it reserved, where no event says more, or
            // where a limit on the process, not the device, refused it).
            capacity = device.peak_reserved;
            for (const SnapshotOom& oom : device.ooms) {
                if (!refused_by_process_limit(oom)) {
                    capacity = std::max(capacity, oom.reserved + oom.device_free);
                }
            }
            result.capacity_source =
                capacity > device.peak_reserved
                    ? "what the program reserved at its out-of-memory and what the device had "
                      "free then"
                    : "the most the program reserved: it ran out of memory there";
        } else {
            result.capacity_source = "none: the trace never ran out of memory";
        }
        result.recorded = allocator::replay_under(trace, recorded, capacity);
        result.program_peak_reserved = device.peak_reserved;
        result.program_peak_reserved_event = device.peak_reserved_event;
        result.program_reserved_recorded = device.reserved_recorded;
        // Against the program, the replay as recorded on a device as large as it had: a device
        // of another size (given) makes another run.
        const std::int64_t baseline =
            result.capacity_given ? allocator::replay_under(trace, recorded, 0, 1).peak_reserved
                                  : result.recorded.peak_reserved;
        const std::int64_t off = baseline - device.peak_reserved;
        // Within 2%, said without multiplying (a figure near 1 EiB times 50 overflows).
        result.baseline_is_the_programs =
            device.reserved_recorded && std::abs(off) <= device.peak_reserved / 50;
        result.replayed = allocator::replay_under(trace, replayed, capacity);
    }
    return results;
}

}  // namespace oomlab
