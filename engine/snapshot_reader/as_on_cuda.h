// What a program recorded on the CPU (a profiler's trace) does otherwise on CUDA, applied to
// its allocator trace before the GPU estimate replays it (bench/results/gpu-2026-12-04.md
// measured each on an H200):
//  - cuBLAS's workspaces, taken from the caching allocator by each thread's first matrix
//    product and kept: the program's thread, and autograd's device thread where it ran a
//    backward pass (allocator::cublas_workspaces), each at its first product where the profile
//    names the ops;
//  - Adam's and AdamW's multi-tensor (foreach) update, PyTorch's default on CUDA: it makes the
//    temporaries of every parameter at once, where the CPU's update makes them one parameter
//    at a time (its sqrt and its quotient together, then frees them);
//  - fused attention (flash, memory-efficient), which makes each call's output alone where the
//    CPU's math kernel makes and keeps each head's scores, softmax and dropout first, and keeps
//    that output and its log-sum-exp for backward; in backward the gradients of the query, key
//    and value beside buffers of its own where the CPU's makes the gradients of each head's
//    weights (where the profile recorded shapes);
//  - dropout's mask, a byte an element, where the CPU keeps its noise in the input's type;
//  - the buffer CUDA's reduction kernel stages a long sum's partial sums in (a bias's gradient:
//    allocator::cuda_sum_buffer_bytes), where the CPU sums in place;
//  - cuDNN's LSTMs and GRUs, where the profile recorded their shapes (record_shapes): its
//    reserve and workspaces (allocator::cudnn_rnn_buffers) in place of what the CPU's RNN kept;
//  - cuDNN's convolutions, where the profile recorded their shapes: their workspaces
//    (allocator::cudnn_conv_workspaces) in place of the CPU's temporaries.
// What it cannot know from the CPU stays out: other kernels that allocate otherwise
// (gpu_estimate says so).
#pragma once

#include <cstddef>
#include <cstdint>

#include "oomlab/allocator/trace_replay.h"
#include "oomlab/snapshot_reader/snapshot_report.h"

namespace oomlab::snapshot {

struct CudaDifferences {
    std::int64_t workspaces = 0;               // bytes of cuBLAS's workspaces, held once taken
    std::size_t updates = 0;                   // optimizer steps whose temporaries were gathered
    std::size_t attention_calls = 0;           // calls of the CPU's attention kernel made fused
    std::size_t attention_backward_calls = 0;  // and their backward, where it was told apart
    std::size_t recurrent_calls = 0;           // RNN calls made as cuDNN makes them
    std::size_t convolution_calls = 0;         // convolutions' calls given cuDNN's workspaces
    std::size_t dropout_masks = 0;             // dropouts keeping a mask in place of noise
    std::size_t reduction_buffers = 0;         // sums given the reduction kernel's buffer
};

CudaDifferences as_on_cuda(allocator::AllocatorTrace& trace, const SnapshotDevice& device);

}  // namespace oomlab::snapshot
