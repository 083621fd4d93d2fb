#include "oomlab/measure/memory_history.h"

#include "oomlab/measure/tracking_allocator.h"
#if OOMLAB_WITH_CUDA
#include "oomlab/measure/cuda_memory.h"
#endif

namespace oomlab::memory {
namespace {

// PyTorch's default for torch.cuda.memory._record_memory_history: enough for thousands of
// steps of these models, a few tens of MiB at most.
constexpr std::size_t kMaxEvents = 100000;

}  // namespace

MemoryHistory::MemoryHistory(const c10::Device& device) : m_device(device) {
#if OOMLAB_WITH_CUDA
    if (m_device.is_cuda()) {
        cuda::start_history(kMaxEvents);
        return;
    }
#endif
    install_tracking_allocator();
    start_cpu_history(kMaxEvents);
}

MemoryHistory::~MemoryHistory() {
#if OOMLAB_WITH_CUDA
    if (m_device.is_cuda()) {
        cuda::stop_history();
        return;
    }
#endif
    stop_cpu_history();
}

MemorySnapshot MemoryHistory::snapshot() const {
#if OOMLAB_WITH_CUDA
    if (m_device.is_cuda()) {
        return cuda::history_snapshot();
    }
#endif
    return cpu_history_snapshot();
}

}  // namespace oomlab::memory
