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

// 0 off CUDA. Sizes as PyTorch 2.x chooses them: CUBLAS_WORKSPACE_CONFIG and
// CUBLASLT_WORKSPACE_SIZE when set, else its defaults for Hopper GPUs (32 MiB per cuBLAS
// handle, 1 MiB for cuBLASLt). Before Hopper its default per handle is 8 MiB + 128 KiB, and
// the estimate is 48 MiB above what such a GPU holds unless CUBLAS_WORKSPACE_CONFIG says so.
std::int64_t cuda_library_workspace_bytes(const ExperimentConfig& config);

// What a CUDA run holds on its device outside the caching allocator: NVML's used memory
// minus what the allocator reserved, as recorded on an H200 (bench/gpu/probe_device_memory.py,
// bench/results/gpu-2026-11-28.md): the driver's own share of an idle device, the CUDA context
// with PyTorch's kernels, the code cuBLAS loads at its first use and again for autograd's
// device thread, cuDNN's for the BiLSTM, and NCCL's buffers where several processes talk over
// it. 0 off CUDA. Other GPUs are assumed to hold the same: only the H200 was recorded (the
// context grows with the number of multiprocessors, the driver's share with the memory).
std::int64_t cuda_outside_allocator_bytes(const ExperimentConfig& config, int world_size);

// CUBLAS_WORKSPACE_CONFIG's value (":SIZE_KIB:COUNT" pairs, e.g. ":4096:8") in bytes;
// nullopt when it has no such pair, as PyTorch then falls back to its default.
std::optional<std::int64_t> parse_cublas_workspace_config(std::string_view value);

}  // namespace oomlab::estimator
