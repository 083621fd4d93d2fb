// The few LibTorch API differences between 1.13 (Debian) and 2.x (GPU users), in one place.
#pragma once

#include <ATen/autocast_mode.h>
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

// Autocast state per device type. LibTorch 2.4 replaced the per-device functions
// (set_cpu_enabled, set_autocast_gpu_dtype, ...) with ones taking the device type.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
inline bool autocast_enabled(c10::DeviceType device) {
    return at::autocast::is_autocast_enabled(device);
}
inline void set_autocast_enabled(c10::DeviceType device, bool enabled) {
    at::autocast::set_autocast_enabled(device, enabled);
}
inline at::ScalarType autocast_dtype(c10::DeviceType device) {
    return at::autocast::get_autocast_dtype(device);
}
inline void set_autocast_dtype(c10::DeviceType device, at::ScalarType dtype) {
    at::autocast::set_autocast_dtype(device, dtype);
}
#else
inline bool autocast_enabled(c10::DeviceType device) {
    return device == c10::DeviceType::CPU ? at::autocast::is_cpu_enabled()
                                          : at::autocast::is_enabled();
}
inline void set_autocast_enabled(c10::DeviceType device, bool enabled) {
    device == c10::DeviceType::CPU ? at::autocast::set_cpu_enabled(enabled)
                                   : at::autocast::set_enabled(enabled);
}
inline at::ScalarType autocast_dtype(c10::DeviceType device) {
    return device == c10::DeviceType::CPU ? at::autocast::get_autocast_cpu_dtype()
                                          : at::autocast::get_autocast_gpu_dtype();
}
inline void set_autocast_dtype(c10::DeviceType device, at::ScalarType dtype) {
    device == c10::DeviceType::CPU ? at::autocast::set_autocast_cpu_dtype(dtype)
                                   : at::autocast::set_autocast_gpu_dtype(dtype);
}
#endif

// Enables autocast for one region (a forward pass), restoring the previous state after.
class AutocastScope {
public:
    AutocastScope(c10::DeviceType device, bool enabled, at::ScalarType dtype)
        : m_device(device),
          m_active(enabled),
          m_was_enabled(autocast_enabled(device)),
          m_previous_dtype(autocast_dtype(device)) {
        if (m_active) {
            set_autocast_enabled(m_device, true);
            set_autocast_dtype(m_device, dtype);
            at::autocast::increment_nesting();
        }
    }
    ~AutocastScope() {
        if (m_active) {
            if (at::autocast::decrement_nesting() == 0) {
                at::autocast::clear_cache();  // casted weights live until the region ends
            }
            set_autocast_enabled(m_device, m_was_enabled);
            set_autocast_dtype(m_device, m_previous_dtype);
        }
    }
    AutocastScope(const AutocastScope&) = delete;
    AutocastScope& operator=(const AutocastScope&) = delete;

private:
    c10::DeviceType m_device;
    bool m_active;
    bool m_was_enabled;
    at::ScalarType m_previous_dtype;
};

}  // namespace oomlab::compat
