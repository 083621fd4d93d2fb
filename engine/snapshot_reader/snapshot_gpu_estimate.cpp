#include "oomlab/snapshot_reader/snapshot_gpu_estimate.h"

#include "as_on_cuda.h"
#include "oomlab/allocator/allocator_settings.h"
#include "oomlab/allocator/trace_replay.h"
#include "oomlab/snapshot_reader/snapshot_whatif.h"

namespace oomlab {

namespace {

// The device's requests as CUDA would make them (snapshot::as_on_cuda), once for every
// setting replayed: what they are does not depend on the allocator's settings.
struct OnCuda {
    allocator::AllocatorTrace trace;
    snapshot::CudaDifferences differences;
};

OnCuda on_cuda(const SnapshotDevice& device, const allocator::AllocatorSettings& settings) {
    OnCuda made{allocator_trace(device, settings), {}};
    made.differences = snapshot::as_on_cuda(made.trace, device);
    return made;
}

allocator::WhatIf replayed(const OnCuda& requests, const std::string& alloc_conf) {
    return allocator::replay_under(requests.trace, allocator::parse_alloc_conf(alloc_conf), 0, 0);
}

// The profiler's CPU, whose tensors a GPU would hold; pinned host memory stays on the host.
bool estimable(const SnapshotDevice& device) {
    // export_memory_timeline's rows (a profile's, with no dump) do not say which device
    // theirs was: most often a GPU's already.
    const bool device_unnamed = device.from_profile && !device.segments_dumped;
    return !served_by_caching_allocator(device) && device.index != kPinnedHostIndex &&
           !host_of_a_gpu_run(device) && !device.changes.empty() && !device_unnamed;
}

}  // namespace

std::optional<GpuEstimate> gpu_estimate(const SnapshotDevice& device,
                                        const std::string& alloc_conf) {
    if (!estimable(device)) {
        return std::nullopt;
    }
    const OnCuda requests = on_cuda(device, allocator::parse_alloc_conf(alloc_conf));
    const allocator::WhatIf plain = replayed(requests, alloc_conf);
    return GpuEstimate{device.peak_allocated,
                       plain.peak_allocated,
                       plain.peak_reserved,
                       plain.segments_at_peak,
                       replayed(requests, "expandable_segments:True").peak_reserved,
                       requests.differences.workspaces,
                       requests.differences.updates,
                       requests.differences.attention_calls,
                       requests.differences.attention_backward_calls,
                       requests.differences.recurrent_calls,
                       requests.differences.convolution_calls,
                       requests.differences.dropout_masks,
                       requests.differences.reduction_buffers};
}

std::optional<std::int64_t> gpu_peak_reserved(const SnapshotDevice& device,
                                              const std::string& alloc_conf) {
    if (!estimable(device)) {
        return std::nullopt;
    }
    const allocator::AllocatorSettings settings = allocator::parse_alloc_conf(alloc_conf);
    return allocator::replay_under(on_cuda(device, settings).trace, settings, 0, 0).peak_reserved;
}

}  // namespace oomlab
