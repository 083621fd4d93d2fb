// cuBLAS's workspaces: what PyTorch's CUDA matrix products take from its caching allocator at
// each thread's first product and keep for the life of the process. A training step has two
// threads that multiply: the program's own (forward, evaluation) and the autograd engine's
// device thread (backward), each with a cuBLAS handle and its workspace; cuBLASLt (a Linear
// with its bias) adds one more, once. So they are part of every peak on CUDA.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace oomlab::allocator {

struct CublasWorkspaces {
    std::int64_t per_handle = 0;  // each thread's cuBLAS handle
    std::int64_t cublas_lt = 0;   // cuBLASLt's, once
    std::int64_t bytes(int handles) const { return handles * per_handle + cublas_lt; }
};

// Sizes as PyTorch 2.x chooses them: CUBLAS_WORKSPACE_CONFIG and CUBLASLT_WORKSPACE_SIZE when
// set, else its defaults for Hopper GPUs (32 MiB a handle, 1 MiB for cuBLASLt, limited to a
// handle's). Before Hopper its default a handle is 8 MiB + 128 KiB: on such a GPU the sizes
// here are 48 MiB above what it holds unless CUBLAS_WORKSPACE_CONFIG says so.
CublasWorkspaces cublas_workspaces();

// CUBLAS_WORKSPACE_CONFIG's value (":SIZE_KIB:COUNT" pairs, e.g. ":4096:8") in bytes;
// nullopt when it has no such pair, as PyTorch then falls back to its default.
std::optional<std::int64_t> parse_cublas_workspace_config(std::string_view value);

}  // namespace oomlab::allocator
