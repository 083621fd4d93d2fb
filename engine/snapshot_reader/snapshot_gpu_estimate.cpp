#include "oomlab/snapshot_reader/snapshot_gpu_estimate.h"

#include "as_on_cuda.h"
#include "oomlab/allocator/allocator_settings.h"
#include "oomlab/allocator/trace_replay.h"
#include "oomlab/snapshot_reader/snapshot_whatif.h"

namespace oomlab {

namespace {

struct Replayed {
    allocator::WhatIf whatif;
    snapshot::CudaDifferences differences;
};

Replayed replayed(const SnapshotDevice& device, const std::string& alloc_conf) {
    const allocator::AllocatorSettings settings = allocator::parse_alloc_conf(alloc_conf);
    allocator::AllocatorTrace trace = allocator_trace(device, settings);
    const snapshot::CudaDifferences differences = snapshot::as_on_cuda(trace, device);
    return {allocator::replay_under(trace, settings, 0, 0), differences};
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
    const Replayed plain = replayed(device, alloc_conf);
    return GpuEstimate{device.peak_allocated,
                       plain.whatif.peak_allocated,
                       plain.whatif.peak_reserved,
                       plain.whatif.segments_at_peak,
                       replayed(device, "expandable_segments:True").whatif.peak_reserved,
                       plain.differences.workspaces,
                       plain.differences.updates,
                       plain.differences.attention_calls};
}

std::optional<std::int64_t> gpu_peak_reserved(const SnapshotDevice& device,
                                              const std::string& alloc_conf) {
    return estimable(device) ? std::optional(replayed(device, alloc_conf).whatif.peak_reserved)
                             : std::nullopt;
}

}  // namespace oomlab
