#include "oomlab/snapshot/snapshot_advice.h"

#include "oomlab/common/format.h"

namespace oomlab {
namespace {

constexpr const char* kExpandable = "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True";
// Cached but free memory worth acting on, without an out-of-memory event to decide.
constexpr double kCachedShare = 0.2;
constexpr std::int64_t kCachedBytes = 64LL << 20;
constexpr double kLineShare = 0.25;     // a line that holds this much of the peak is named
constexpr double kUntracedShare = 0.5;  // and a history that saw less than this is said to

std::string percent_of(std::int64_t part, std::int64_t whole) {
    return std::to_string(whole > 0 ? (100 * part + whole / 2) / whole : 0) + "%";
}

void advise_on_oom(const SnapshotOom& oom, std::vector<SnapshotAdvice>& advice) {
    const std::int64_t cached = oom.reserved - oom.allocated;
    if (cached >= oom.requested) {
        advice.push_back(
            {kExpandable,
             "at the out-of-memory (event " + std::to_string(oom.event) + "), " +
                 format_bytes(cached) + " was reserved but held no tensor, more than the " +
                 format_bytes(oom.requested) +
                 " asked for, in pieces none of which was large enough: the cache is "
                 "fragmented. Expandable segments grow one mapping instead of leaving gaps "
                 "between blocks of different sizes."});
        return;
    }
    advice.push_back(
        {"hold less at the peak",
         "at the out-of-memory (event " + std::to_string(oom.event) + "), " +
             format_bytes(oom.requested) + " was asked with " + format_bytes(oom.device_free) +
             " free on the device and only " + format_bytes(cached) +
             " cached but free: the memory was really in use, so fragmentation settings will "
             "not help. A smaller batch, mixed precision or activation checkpointing shrink "
             "what is alive; the lines below hold the most."});
}

}  // namespace

std::vector<SnapshotAdvice> snapshot_advice(const SnapshotDevice& device) {
    std::vector<SnapshotAdvice> advice;
    if (!device.ooms.empty()) {
        advise_on_oom(device.ooms.back(), advice);
    } else {
        const std::int64_t cached = device.reserved_at_peak - device.peak_allocated;
        if (cached >= kCachedBytes &&
            double(cached) >= kCachedShare * double(device.reserved_at_peak)) {
            advice.push_back(
                {kExpandable, "at the peak, " + format_bytes(cached) + " of the " +
                                  format_bytes(device.reserved_at_peak) + " reserved (" +
                                  percent_of(cached, device.reserved_at_peak) +
                                  ") held no tensor: memory other programs on the device, or a "
                                  "larger batch, could use. Expandable segments keep less "
                                  "cached; torch.cuda.empty_cache() between phases returns it."});
        }
    }
    for (const SnapshotLine& line : device.at_peak) {
        if (line.where == kAllocatedBeforeTrace) {
            if (double(line.bytes) >= kUntracedShare * double(device.peak_allocated)) {
                advice.push_back(
                    {"record the history from the start",
                     format_bytes(line.bytes) + " of the " + format_bytes(device.peak_allocated) +
                         " alive at the peak (" + percent_of(line.bytes, device.peak_allocated) +
                         ") was allocated before the trace began, so no line can be named for "
                         "it: call torch.cuda.memory._record_memory_history() before building "
                         "the model and the optimizer."});
            }
        } else if (double(line.bytes) >= kLineShare * double(device.peak_allocated)) {
            advice.push_back({"start with " + line.where,
                              "it holds " + format_bytes(line.bytes) + " at the peak (" +
                                  percent_of(line.bytes, device.peak_allocated) +
                                  " of what is allocated) in " + std::to_string(line.blocks) +
                                  (line.blocks == 1 ? " block" : " blocks") + "."});
        }
    }
    return advice;
}

}  // namespace oomlab
