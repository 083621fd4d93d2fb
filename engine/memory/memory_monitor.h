// Memory of the training device as a run sees it: bytes held by tensors now, the peak since
// the last step began, and what the device (or, on the CPU, the process) uses in all.
#pragma once

#include <cstdint>
#include <optional>

#include <c10/core/Device.h>

namespace oomlab::memory {

struct MemorySample {
    std::int64_t allocated = 0;
    std::int64_t reserved = 0;
    std::int64_t step_peak = 0;
    std::optional<std::int64_t> device_used;
};

// CPU: tensor bytes from the tracking allocator, counted from the run's start (what existed
// before, such as the prepared host copy of the table, is not on the simulated device);
// there is no caching allocator, so reserved equals allocated; device used is the process
// RSS, which also holds the freed memory the heap keeps for reuse (memory.empty_cache
// hands it back).
class MemoryMonitor {
public:
    // Starts counting; `cap_bytes` > 0 makes allocations past the cap fail with an OOM.
    explicit MemoryMonitor(std::int64_t cap_bytes);
    ~MemoryMonitor();  // lifts the cap

    MemorySample sample();
    void begin_step();  // the step peak restarts from what is allocated now
    std::int64_t run_peak() const { return m_run_peak; }

private:
    std::int64_t m_baseline = 0;
    std::int64_t m_run_peak = 0;
};

// memory.empty_cache: hands cached, unused memory back (CPU: the heap's free pages to the
// system, so the process RSS drops; CUDA: the caching allocator's free blocks).
void release_cached_memory(const c10::Device& device);

}  // namespace oomlab::memory
