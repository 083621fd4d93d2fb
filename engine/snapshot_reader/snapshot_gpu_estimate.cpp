#include "oomlab/snapshot_reader/snapshot_gpu_estimate.h"

#include "oomlab/allocator/allocator_settings.h"
#include "oomlab/allocator/trace_replay.h"
#include "oomlab/snapshot_reader/snapshot_whatif.h"

namespace oomlab {

namespace {

allocator::WhatIf replayed(const SnapshotDevice& device, const std::string& alloc_conf) {
    const allocator::AllocatorSettings settings = allocator::parse_alloc_conf(alloc_conf);
    return allocator::replay_under(allocator_trace(device, settings), settings, 0, 0);
}

// The profiler's CPU, whose tensors a GPU would hold; pinned host memory stays on the host.
bool estimable(const SnapshotDevice& device) {
    return !served_by_caching_allocator(device) && device.index != kPinnedHostIndex &&
           !device.changes.empty();
}

}  // namespace

std::optional<GpuEstimate> gpu_estimate(const SnapshotDevice& device,
                                        const std::string& alloc_conf) {
    if (!estimable(device)) {
        return std::nullopt;
    }
    const allocator::WhatIf plain = replayed(device, alloc_conf);
    return GpuEstimate{device.peak_allocated, plain.peak_reserved, plain.segments_at_peak,
                       replayed(device, "expandable_segments:True").peak_reserved};
}

std::optional<std::int64_t> gpu_peak_reserved(const SnapshotDevice& device,
                                              const std::string& alloc_conf) {
    return estimable(device) ? std::optional(replayed(device, alloc_conf).peak_reserved)
                             : std::nullopt;
}

}  // namespace oomlab
