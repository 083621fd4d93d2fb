#include "memory_monitor.h"

#include <malloc.h>

#include <algorithm>

#include "tracking_allocator.h"

namespace oomlab::memory {

MemoryMonitor::MemoryMonitor(std::int64_t cap_bytes) {
    install_tracking_allocator();
    m_baseline = cpu_tensor_stats().current_bytes;
    reset_cpu_peak();
    set_cpu_cap_bytes(cap_bytes > 0 ? m_baseline + cap_bytes : 0);
}

MemoryMonitor::~MemoryMonitor() { set_cpu_cap_bytes(0); }

MemorySample MemoryMonitor::sample() {
    const CpuTensorStats stats = cpu_tensor_stats();
    MemorySample sample;
    sample.allocated = std::max<std::int64_t>(0, stats.current_bytes - m_baseline);
    sample.reserved = sample.allocated;
    sample.step_peak = std::max<std::int64_t>(0, stats.peak_bytes - m_baseline);
    sample.device_used = process_rss_bytes();
    m_run_peak = std::max(m_run_peak, sample.step_peak);
    return sample;
}

void MemoryMonitor::begin_step() {
    sample();  // keep the finished step's peak in the run's peak
    reset_cpu_peak();
}

void release_cached_memory(const c10::Device& device) {
    if (device.is_cpu()) {
        malloc_trim(0);
    }
}

}  // namespace oomlab::memory
