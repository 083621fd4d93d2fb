// What PyTorch's CUDA libraries take from its caching allocator before the first tensor of
// a step: cuBLAS's workspaces. A training step holds two cuBLAS handles, each with its own
// workspace: the training thread's (forward, evaluation) and the autograd engine's device
// thread's (backward); matrix products through cuBLASLt (a Linear with its bias) add one more.
// They stay allocated for the life of the process, so they are part of every peak on CUDA.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "oomlab/config/experiment_config.h"

namespace oomlab::estimator {

// 0 off CUDA: two handles' and cuBLASLt's (allocator::cublas_workspaces says their sizes).
std::int64_t cuda_library_workspace_bytes(const ExperimentConfig& config);

// What a CUDA run holds on its device outside the caching allocator: NVML's used memory
// minus what the allocator reserved, as recorded on an H200 (bench/gpu/probe_device_memory.py,
// bench/results/gpu-2026-11-28.md): the driver's own share of an idle device, the CUDA context
// with PyTorch's kernels, the code cuBLAS loads at its first use and again for autograd's
// device thread, cuDNN's for the BiLSTM, and NCCL's buffers where several processes talk over
// it. 0 off CUDA. Other GPUs are assumed to hold the same: only the H200 was recorded (the
// context grows with the number of multiprocessors, the driver's share with the memory).
std::int64_t cuda_outside_allocator_bytes(const ExperimentConfig& config, int world_size);

}  // namespace oomlab::estimator
