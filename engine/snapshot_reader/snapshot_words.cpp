// A report's figures in words, for `snapshot show` and the snapshot window: a device's name,
// the order devices are shown in, an out-of-memory a process limit refused, the end state's
// rounding and pools; and a device's memory as a person writes it (--device-memory).
#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "oomlab/common/errors.h"
#include "oomlab/common/format.h"
#include "oomlab/common/size_text.h"
#include "oomlab/snapshot_reader/snapshot_report.h"
#include "oomlab/snapshot_reader/snapshot_whatif.h"

namespace oomlab {
namespace {

std::string pool_words(const SnapshotPool& pool) {
    const std::string id = "(" + std::to_string(pool.owner) + ", " + std::to_string(pool.id) + ")";
    return id + (pool.owner == 0 && pool.id == 0 ? " the default pool" : " a private pool") + ": " +
           std::to_string(pool.segments) + (pool.segments == 1 ? " segment, " : " segments, ") +
           format_bytes(pool.reserved) + " reserved, " + format_bytes(pool.allocated) +
           " allocated";
}

}  // namespace

std::int64_t line_bytes_held(const SnapshotLine& line) {
    return line.block_bytes > 0 ? line.block_bytes : line.bytes;
}

std::string line_blocks_words(const SnapshotLine& line) {
    const std::string blocks =
        std::to_string(line.blocks) + (line.blocks == 1 ? " block" : " blocks");
    const std::string asked = format_bytes(line.bytes);
    return format_bytes(line_bytes_held(line)) == asked ? blocks
                                                        : blocks + "; " + asked + " asked for";
}

std::string snapshot_device_name(int index) {
    if (index == kPinnedHostIndex) {
        return "pinned host memory";
    }
    return index < 0 ? "the CPU" : "device " + std::to_string(index);
}

bool holds_little(const SnapshotDevice& device) {
    constexpr std::int64_t kLittle = std::int64_t{1} << 20;
    return device.peak_allocated < kLittle && device.peak_reserved == 0 && device.ooms.empty();
}

void order_devices(std::vector<SnapshotDevice>& devices) {
    std::stable_sort(devices.begin(), devices.end(),
                     [](const SnapshotDevice& a, const SnapshotDevice& b) {
                         const auto rank = [](const SnapshotDevice& d) {
                             return std::tuple(holds_little(d), d.index < 0, d.index);
                         };
                         return rank(a) < rank(b);
                     });
}

bool refused_by_process_limit(const SnapshotOom& oom) {
    // A request may open a segment up to 20 MiB larger than itself (one of 1 to 10 MiB).
    constexpr std::int64_t kLargestRounding = std::int64_t{20} << 20;
    return oom.requested > 0 && oom.device_free - kLargestRounding >= oom.requested;
}

std::string process_limit_note(const SnapshotOom& oom) {
    if (!refused_by_process_limit(oom)) {
        return {};
    }
    return "the device had room: a limit on this process refused it (a memory fraction, "
           "torch.cuda.set_per_process_memory_fraction), set between " +
           format_bytes(oom.reserved) + " reserved and " +
           format_bytes(oom.reserved + oom.requested) + " with the request";
}

namespace {

// Whether the device's reserved memory means anything: the CPU's allocator in a profiler's
// trace reserves nothing, and an old trace does not say.
bool reserves(const SnapshotDevice& d) {
    return d.reserved_recorded && d.index != kProfilerCpuIndex;
}

// What a trace without totals (PyTorch before 1.10) allocated when it began: nothing it can
// tell of, or what its first frees show was there.
std::int64_t counted_from(const SnapshotDevice& d) {
    return d.timeline.empty() ? 0 : d.timeline.front().allocated;
}

}  // namespace

std::string snapshot_end_words(const SnapshotDevice& d) {
    const std::string allocated = format_bytes(d.allocated) + " allocated at the end";
    if (d.from_trace && !d.totals_recorded) {
        // The events' sum alone: what the program held before the trace is nowhere in it.
        const std::int64_t start = counted_from(d);
        return allocated + ", the events' net sum over the trace" +
               (start > 0 ? " and the " + format_bytes(start) + " its frees show was there before"
                          : "") +
               " (the profiler wrote no totals before PyTorch 1.10: what was allocated before "
               "the trace began is not known" +
               (d.index == kProfilerCpuIndex ? "; the CPU's allocator reserves nothing)"
                                             : ", and what was reserved is not recorded)");
    }
    if (d.from_trace && d.index == kProfilerCpuIndex) {
        return allocated + " (the profiler's totals; the CPU's allocator reserves nothing)";
    }
    if (!d.from_trace && !d.segments_dumped) {
        return "no segments dumped (a device's trace saved alone): " +
               (reserves(d) ? format_bytes(d.reserved) + " reserved, " : std::string()) +
               allocated + " by the trace's own reckoning";
    }
    if (!d.from_trace) {
        return std::to_string(d.segments) + " segments, " + format_bytes(d.reserved) +
               " reserved, " + allocated;
    }
    return format_bytes(d.reserved) + " reserved, " + allocated +
           " (the profiler's totals; a trace records no segments)";
}

namespace {

// Where the peak stood among the trace's events: before the first, it is the trace's start.
std::string peak_among_events(const SnapshotDevice& d) {
    return d.peak_event == 0
               ? "at the start of the trace, before its " + std::to_string(d.events) +
                     (d.events == 1 ? " event" : " events")
               : "after event " + std::to_string(d.peak_event) + " of " + std::to_string(d.events);
}

}  // namespace

std::string snapshot_peak_words(const SnapshotDevice& d) {
    if (d.events == 0) {
        return "allocated at the dump: " + format_bytes(d.peak_allocated) +
               " (no trace, so no peak)" +
               (reserves(d) ? "; reserved then " + format_bytes(d.reserved) : "");
    }
    std::string words = "peak allocated: " + format_bytes(d.peak_allocated);
    if (d.from_trace && !d.totals_recorded) {
        const std::int64_t start = counted_from(d);
        return words +
               (start > 0 ? ", counting of what was allocated before the trace began only the " +
                                format_bytes(start) + " its frees show"
                          : " above what was allocated when the trace began") +
               ", " + peak_among_events(d);
    }
    words += " " + peak_among_events(d);
    if (!reserves(d)) {
        return words;
    }
    return words + ", reserved at that moment " + format_bytes(d.reserved_at_peak) +
           "; most reserved at any time " + format_bytes(d.peak_reserved);
}

std::string snapshot_free_words(const SnapshotDevice& d) {
    if (!reserves(d) || !d.segments_dumped) {  // no blocks, so no pieces to tell
        return {};
    }
    const std::string free = "cached but free at the end: " + format_bytes(d.cached_free);
    return d.from_trace ? free +
                              " (reserved less allocated; a trace records no blocks, so "
                              "not the pieces it was in)"
                        : free + ", the largest piece " + format_bytes(d.largest_free_block);
}

std::string snapshot_empty_words(const SnapshotReport& report) {
    // Segments are dumped whether the history was recorded or not: none means nothing was held.
    const std::size_t seen = report.devices_seen;
    const std::string settings = !report.alloc_conf ? ""
                                 : report.alloc_conf->empty()
                                     ? "; its allocator ran with PyTorch's defaults"
                                     : "; its allocator's settings: " + *report.alloc_conf;
    return "no device's memory in it (no segments, no trace events): the caching allocator held "
           "no memory on " +
           (seen > 1    ? "any of the " + std::to_string(seen) + " devices this process saw"
            : seen == 1 ? std::string("the device this process saw")
                        : std::string("any device")) +
           " when the snapshot was taken: it was dumped before the first CUDA allocation, after "
           "torch.cuda.empty_cache(), or by a process (a rank) that allocated nothing" +
           settings +
           ". Dump it after the step whose memory you want to see (or on the out-of-memory "
           "error), with torch.cuda.memory._record_memory_history() before that step for its "
           "trace";
}

std::vector<std::string> snapshot_end_notes(const SnapshotDevice& device) {
    std::vector<std::string> notes;
    if (host_of_a_gpu_run(device)) {
        notes.push_back("the program ran on a GPU (the trace holds " +
                        (device.gpu_kernels > 0
                             ? std::to_string(device.gpu_kernels) + " of its kernels and copies"
                             : std::string("a GPU's memory too")) +
                        "): this is the host's memory, not the GPU's" +
                        (device.gpu_memory_recorded
                             ? std::string()
                             : ", and the trace recorded none of the GPU's (its caching "
                               "allocator off, or no CUDA memory event kept)"));
    }
    // A trace of segments alone (a history that kept only its last entries, or begun after the
    // last allocation): its "peak" is what was alive when it was dumped.
    const bool allocates = std::any_of(device.changes.begin(), device.changes.end(),
                                       [](const SnapshotTraceChange& change) {
                                           return change.what == SnapshotTraceChange::What::Alloc;
                                       });
    if (!device.changes.empty() && !allocates) {
        notes.push_back(
            "the trace holds no allocation (" + std::to_string(device.events) +
            (device.events == 1 ? " event, not an allocation" : " events, none an allocation") +
            "): its peak is what was alive when the snapshot was "
            "dumped, not the run's; record the history before the step to see it");
    }
    if (device.pending_free > 0) {
        notes.push_back(format_bytes(device.pending_free) +
                        " freed by the program but not yet reusable: blocks waiting for work on "
                        "another stream to end (record_stream), neither allocated nor cached "
                        "free (active_pending_free)");
    }
    // PyTorch's own files never hold more allocated than reserved: a file made by other means.
    if (device.index >= 0 && device.reserved_recorded && !device.from_profile &&
        device.peak_allocated > device.reserved_at_peak) {
        notes.push_back("the figures do not add up: " + format_bytes(device.peak_allocated) +
                        " allocated at the peak, more than the " +
                        format_bytes(device.reserved_at_peak) +
                        " reserved then; PyTorch's allocator never holds more than it "
                        "reserved, so this file was not written as PyTorch writes one");
    }
    if (device.from_profile && !device.segments_dumped) {
        notes.push_back(
            "made from export_memory_timeline's rows (each tensor's size and PyTorch's category "
            "of it; no address, frame or segment, nor the device's name): a free is matched to "
            "the last tensor of its size and category; what was allocated, when, and what it "
            "was for are the profiler's");
    } else if (device.from_profile) {
        notes.push_back(
            "made from a profile (its events carry PyTorch's tensor categories, as "
            "torch.cuda._memory_viz._profile_to_snapshot writes them): its segment only spans "
            "the addresses its tensors had, so nothing is counted as reserved; what was "
            "allocated, when, and what it was for are the profile's");
    }
    if (device.requested >= 0 && device.requested < device.allocated) {
        notes.push_back("of the " + format_bytes(device.allocated) +
                        " allocated at the end, the program asked for " +
                        format_bytes(device.requested) + ": " +
                        format_bytes(device.allocated - device.requested) +
                        " is the allocator's rounding of requests up to its block sizes");
    }
    if (device.pools.size() > 1) {
        std::string text =
            "by memory pool (a private pool, a CUDA graph's or a "
            "torch.cuda.MemPool's, serves only its own requests): ";
        for (std::size_t i = 0; i < device.pools.size(); ++i) {
            text += (i ? "; " : "") + pool_words(device.pools[i]);
        }
        notes.push_back(text);
    }
    return notes;
}

// A device's memory as a person writes it (common/size_text.h). A bare number under 1 MiB is
// refused: "80" meant gigabytes, not 80 bytes.
std::int64_t device_memory_bytes(const std::string& text, const std::string& control) {
    const std::optional<double> bytes = size_text_bytes(text);
    if (!bytes || !(*bytes > 0)) {
        throw BadInput(control + " " + text + ": give a size with its unit, e.g. 80GiB (or bytes)");
    }
    if (*bytes > double(kMostDeviceBytes)) {
        throw BadInput(control + " " + text + ": more than 1 PiB, more than any GPU holds");
    }
    if (*bytes < double(std::int64_t(1) << 20)) {
        throw BadInput(control + " " + text + ": " + format_bytes(std::int64_t(*bytes)) +
                       " is less than any GPU holds; give the unit, e.g. " + text + "GiB");
    }
    return static_cast<std::int64_t>(*bytes);
}

}  // namespace oomlab
