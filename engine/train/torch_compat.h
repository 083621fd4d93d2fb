// The few LibTorch API differences between 1.13 (Debian) and 2.x (GPU users), in one place.
#pragma once

#include <c10/core/Allocator.h>
#include <c10/util/Exception.h>
#include <torch/version.h>

// LibTorch 2.3 made Allocator::allocate non-const and added the pure virtual copy_data.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
#define OOMLAB_ALLOCATOR_ALLOCATE_CONST
#define OOMLAB_ALLOCATOR_HAS_COPY_DATA 1
#else
#define OOMLAB_ALLOCATOR_ALLOCATE_CONST const
#define OOMLAB_ALLOCATOR_HAS_COPY_DATA 0
#endif

namespace oomlab::compat {

// The error the CUDA caching allocator throws when it cannot allocate; the tracking CPU
// allocator throws the same type for a capped CPU. (c10::OutOfMemoryError since 1.13.)
using OutOfMemoryError = c10::OutOfMemoryError;

// Allocations that fail outside the caching allocator (cuBLAS workspaces, cuDNN) surface as
// plain c10::Error with this text.
inline bool is_out_of_memory(const c10::Error& error) {
    if (dynamic_cast<const c10::OutOfMemoryError*>(&error)) {
        return true;
    }
    const std::string message = error.what_without_backtrace();
    return message.find("out of memory") != std::string::npos ||
           message.find("CUBLAS_STATUS_ALLOC_FAILED") != std::string::npos ||
           message.find("CUDNN_STATUS_ALLOC_FAILED") != std::string::npos;
}

}  // namespace oomlab::compat
