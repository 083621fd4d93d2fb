// The few LibTorch API differences between 1.13 (Debian) and 2.x (GPU users), in one place.
#pragma once

#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <c10/core/Allocator.h>
#include <c10/util/Exception.h>
#include <c10/util/Logging.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/version.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if OOMLAB_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

// LibTorch 2.3 made Allocator::allocate non-const and added the pure virtual copy_data.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
#define OOMLAB_ALLOCATOR_ALLOCATE_CONST
#define OOMLAB_ALLOCATOR_HAS_COPY_DATA 1
#else
#define OOMLAB_ALLOCATOR_ALLOCATE_CONST const
#define OOMLAB_ALLOCATOR_HAS_COPY_DATA 0
#endif

// The base class of c10d's process groups (Gloo, NCCL): ProcessGroup in 1.13, Backend from
// 2.0 on, when ProcessGroup became a dispatcher over backends.
namespace c10d {
class ProcessGroup;
class Backend;
}  // namespace c10d

namespace oomlab::compat {

#if TORCH_VERSION_MAJOR >= 2
using CollectiveBackend = c10d::Backend;
#else
using CollectiveBackend = c10d::ProcessGroup;
#endif

// Optimizer::state() is keyed by the parameter's TensorImpl: its address as text (1.13), the
// address itself (2.x). `StateMap` is the type of that map.
template <typename StateMap>
typename StateMap::key_type optimizer_state_key(const at::Tensor& parameter) {
    if constexpr (std::is_same_v<typename StateMap::key_type, std::string>) {
        std::ostringstream address;
        address << parameter.unsafeGetTensorImpl();
        return address.str();
    } else {
        return parameter.unsafeGetTensorImpl();
    }
}

// A leaf tensor's gradient accumulator, the autograd node that hooks go on: a std::shared_ptr
// in 1.13 and 2.3, a c10::intrusive_ptr in later 2.x (2.14), whichever this LibTorch returns.
using GradAccumulator =
    decltype(torch::autograd::impl::grad_accumulator(std::declval<const at::Tensor&>()));

// The error the CUDA caching allocator throws when it cannot allocate; the tracking CPU
// allocator throws the same type for a capped CPU. (c10::OutOfMemoryError since 1.13.)
using OutOfMemoryError = c10::OutOfMemoryError;

// An exception's message without the C++ backtrace that LibTorch 2.x appends to c10::Error's
// what() (1.13 gives the same text either way).
inline std::string message_of(const std::exception& error) {
    if (const auto* c10_error = dynamic_cast<const c10::Error*>(&error)) {
        return c10_error->what_without_backtrace();
    }
    return error.what();
}

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

// Drops LibTorch's warnings for as long as it lives (the current thread's, in 2.x): a handler
// takes a location and a message in 1.13, a c10::Warning in 2.x, and the guard moved from
// c10::Warning to c10::WarningUtils.
class QuietWarnings {
    struct Dropped : c10::WarningHandler {
#if TORCH_VERSION_MAJOR >= 2
        void process(const c10::Warning&) override {}
#else
        void process(const c10::SourceLocation&, const std::string&, bool) override {}
#endif
    };
#if TORCH_VERSION_MAJOR >= 2
    using Guard = c10::WarningUtils::WarningHandlerGuard;
#else
    using Guard = c10::Warning::WarningHandlerGuard;
#endif
    Dropped m_dropped;
    Guard m_guard{&m_dropped};
};

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

// The AMP ops a grad scaler is built on (unscale with an inf/NaN check, scale update) have
// CUDA kernels in every version and CPU kernels from LibTorch 2.3; before that the scaler
// spells them out on the CPU.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
inline bool has_amp_ops(c10::DeviceType) {
    return true;
}
#else
inline bool has_amp_ops(c10::DeviceType device) {
    return device == c10::DeviceType::CUDA;
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

#if OOMLAB_WITH_CUDA
// PYTORCH_CUDA_ALLOC_CONF set from the program (memory.alloc_conf): LibTorch 2.1 and later
// read it again when told; before, only the variable read when the allocator starts.
inline void set_cuda_allocator_settings(const std::string& conf) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
    c10::cuda::CUDACachingAllocator::setAllocatorSettings(conf);
#else
    setenv("PYTORCH_CUDA_ALLOC_CONF", conf.c_str(), /*overwrite=*/1);
#endif
}

// Whether a snapshot's segment is a mapped range of an expandable segment: a field of
// PyTorch 2.1 and later; earlier versions had no expandable segments.
template <typename Segment, typename = void>
struct has_is_expandable : std::false_type {};
template <typename Segment>
struct has_is_expandable<Segment, std::void_t<decltype(Segment::is_expandable)>> : std::true_type {
};
template <typename Segment>
bool segment_is_expandable(const Segment& segment) {
    if constexpr (has_is_expandable<Segment>::value) {
        return segment.is_expandable;
    } else {
        return false;
    }
}

// The index of the all-pools figures in the CUDA allocator's statistics: StatType::AGGREGATE,
// which later 2.x moved from c10::cuda::CUDACachingAllocator to c10::CachingAllocator.
inline constexpr std::size_t kAggregateStat = 0;

// The caching allocator's history API (LibTorch 2.1 and later) gained parameters over the
// versions: a clear-history flag, then actions to skip. The overloads are tried newest first;
// the call must depend on a template parameter for a missing signature to be skipped.
namespace cuda_history {
namespace allocator = c10::cuda::CUDACachingAllocator;
struct Base {};
struct WithClear : Base {};
struct WithSkipActions : WithClear {};

// Turning the history off passes RecordContext::NEVER: 2.x checks that any other context
// comes with a recorder, and the one that turns it off has none.
inline allocator::RecordContext record_context(bool on) {
    return on ? allocator::RecordContext::ALL : allocator::RecordContext::NEVER;
}
template <typename Recorder>
auto record(WithSkipActions, bool on, Recorder recorder, std::size_t max_events)
    -> decltype(allocator::recordHistory(on, recorder, max_events, record_context(on), false,
                                         std::vector<std::string>{})) {
    return allocator::recordHistory(on, recorder, max_events, record_context(on),
                                    /*clearHistory=*/false, std::vector<std::string>{});
}
template <typename Recorder>
auto record(WithClear, bool on, Recorder recorder, std::size_t max_events)
    -> decltype(allocator::recordHistory(on, recorder, max_events, record_context(on), false)) {
    return allocator::recordHistory(on, recorder, max_events, record_context(on),
                                    /*clearHistory=*/false);
}
template <typename Recorder>
auto record(Base, bool on, Recorder recorder, std::size_t max_events)
    -> decltype(allocator::recordHistory(on, recorder, max_events, record_context(on))) {
    return allocator::recordHistory(on, recorder, max_events, record_context(on));
}

// A trace entry's time, where the version records one.
template <typename Entry>
auto time_us(WithClear, const Entry& entry) -> decltype(std::int64_t(entry.time_.t_)) {
    return static_cast<std::int64_t>(entry.time_.t_);
}
template <typename Entry>
std::int64_t time_us(Base, const Entry&) {
    return 0;
}
}  // namespace cuda_history

inline void record_cuda_history(bool on, c10::cuda::CUDACachingAllocator::CreateContextFn recorder,
                                std::size_t max_events) {
    cuda_history::record<c10::cuda::CUDACachingAllocator::CreateContextFn>(
        cuda_history::WithSkipActions{}, on, recorder, max_events);
}

inline std::int64_t trace_time_us(const c10::cuda::CUDACachingAllocator::TraceEntry& entry) {
    return cuda_history::time_us(cuda_history::WithClear{}, entry);
}
#endif

// Keeps LibTorch's own log lines below FATAL off standard error. c10d logs a failure (a
// rendezvous it cannot reach, a peer that went away) before throwing it, and the engine reports
// that failure once, with what to do. LibTorch built with glog (Debian's) filters by glog's
// level, the others by c10's. A TORCH_CPP_LOG_LEVEL the user set stays in charge.
inline void quiet_library_logging() {
    if (std::getenv("TORCH_CPP_LOG_LEVEL") != nullptr) {
        return;
    }
#ifdef C10_USE_GLOG
    FLAGS_minloglevel = google::GLOG_FATAL;
#else
    FLAGS_caffe2_log_level = 3;  // c10's FATAL
#endif
}

}  // namespace oomlab::compat
