#include "oomlab/snapshot_reader/snapshot_gpu_estimate.h"

#include "oomlab/allocator/allocator_settings.h"
#include "oomlab/allocator/trace_replay.h"
#include "oomlab/snapshot_reader/snapshot_whatif.h"

namespace oomlab {

std::optional<GpuEstimate> gpu_estimate(const SnapshotDevice& device,
                                        const std::string& alloc_conf) {
    if (device.index >= 0 || device.changes.empty()) {
        return std::nullopt;  // a GPU's own trace, or no memory events
    }
    GpuEstimate estimate;
    estimate.peak_allocated = device.peak_allocated;
    const allocator::AllocatorSettings settings = allocator::parse_alloc_conf(alloc_conf);
    const allocator::WhatIf plain =
        allocator::replay_under(allocator_trace(device, settings), settings, 0, 0);
    estimate.peak_reserved = plain.peak_reserved;
    estimate.segments_at_peak = plain.segments_at_peak;
    const allocator::AllocatorSettings expandable =
        allocator::parse_alloc_conf("expandable_segments:True");
    estimate.peak_reserved_expandable =
        allocator::replay_under(allocator_trace(device, expandable), expandable, 0, 0)
            .peak_reserved;
    return estimate;
}

}  // namespace oomlab
