// A program that ran on the CPU, on a GPU: the requests its profiler recorded (memory events
// of torch.profiler, what `oomlab-cli record` keeps where there is no CUDA) replayed through
// the model of PyTorch's CUDA caching allocator, to say what it would reserve there. An
// estimate, named as one: what the CPU's run cannot tell is said with it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "oomlab/snapshot_reader/snapshot_report.h"

namespace oomlab {

struct GpuEstimate {
    std::int64_t peak_allocated = 0;  // what the program held at most, on the CPU
    // The same requests on CUDA (snapshot::as_on_cuda: with cuBLAS's workspaces, Adam's
    // multi-tensor update, fused attention, cuDNN's RNNs and convolutions): what they would hold
    // at most, what the caching allocator would reserve at most under the setting asked for
    // (PyTorch's defaults by default) and with expandable_segments:True, and its segments at
    // that moment.
    std::int64_t gpu_peak_allocated = 0;
    std::int64_t peak_reserved = 0;
    std::int64_t segments_at_peak = 0;
    std::int64_t peak_reserved_expandable = 0;
    std::int64_t cublas_workspaces = 0;        // of gpu_peak_allocated
    std::size_t updates_gathered = 0;          // optimizer steps made multi-tensor
    std::size_t attention_fused = 0;           // calls of the CPU's attention kernel made fused
    std::size_t attention_backward_fused = 0;  // and their backward, where it was told apart
    std::size_t recurrent_as_cudnn = 0;        // RNN calls made as cuDNN makes them
    std::size_t convolutions_as_cudnn = 0;     // convolutions' calls given cuDNN's workspaces
    std::size_t dropouts_as_masks = 0;         // dropouts keeping CUDA's mask, not the noise
    std::size_t sums_with_buffers = 0;         // sums given the reduction kernel's buffer
};

// For the CPU's device of a profiler's trace (index -1, with memory events); none otherwise.
// `alloc_conf` in PYTORCH_CUDA_ALLOC_CONF's syntax (BadInput when it is not).
std::optional<GpuEstimate> gpu_estimate(const SnapshotDevice& device,
                                        const std::string& alloc_conf = "");
// Its peak_reserved alone: one replay, not the two of gpu_estimate.
std::optional<std::int64_t> gpu_peak_reserved(const SnapshotDevice& device,
                                              const std::string& alloc_conf);

// What the estimate leaves out, in one sentence.
inline constexpr const char* kGpuEstimateLeavesOut =
    "counted as on CUDA: cuBLAS's workspaces, Adam's multi-tensor update, fused attention, "
    "and where the profile recorded shapes: attention's backward, dropout's masks, the "
    "reduction kernel's buffers, cuDNN's LSTMs and GRUs and its convolutions' workspaces (1-d "
    "and 2-d ungrouped convolutions); not counted: the CUDA context and libraries outside the "
    "allocator (about 0.5 GiB), what other kernels allocate otherwise on CUDA, and tensors that "
    "would stay on the host";

}  // namespace oomlab
