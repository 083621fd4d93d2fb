#include "oomlab/measure/memory_monitor.h"

#include <malloc.h>

#include <algorithm>

#include "nvml.h"
#include "oomlab/allocator/allocator_settings.h"
#include "oomlab/common/format.h"
#include "oomlab/measure/tracking_allocator.h"
#if OOMLAB_WITH_CUDA
#include "oomlab/measure/cuda_memory.h"
#endif

namespace oomlab::memory {

MemoryMonitor::MemoryMonitor(const c10::Device& device, std::int64_t cap_bytes,
                             const std::string& alloc_conf)
    : m_device(device), m_cap(cap_bytes) {
#if OOMLAB_WITH_CUDA
    if (m_device.is_cuda()) {
        const int index = m_device.index();
        if (!alloc_conf.empty()) {
            cuda::set_allocator_settings(alloc_conf);
        }
        cuda::watch_out_of_memory();
        cuda::clear_oom_state(index);  // an earlier run's
        const cuda::AllocatorStats stats = cuda::allocator_stats(index);
        m_baseline = stats.allocated;
        m_retries_at_start = stats.alloc_retries;
        m_ooms_at_start = stats.ooms;
        m_pci_bus_id = cuda::pci_bus_id(index);
        cuda::reset_peak(index);
        if (cap_bytes > 0) {
            // The fraction bounds only what the allocator asks the device for next: blocks an
            // earlier run of this process left cached would serve this one past the cap.
            cuda::empty_cache();
            // Experiment::prepare refused a cap beyond the device; what the process already
            // holds may still take the sum past it.
            const double total = double(cuda::total_bytes(index));
            cuda::set_memory_fraction(index, std::min(1.0, double(m_baseline + cap_bytes) / total));
        }
        return;
    }
#endif
    install_tracking_allocator();
    const CpuTensorStats stats = cpu_tensor_stats();
    m_baseline = stats.current_bytes;
    m_ooms_at_start = stats.oom_count;
    reset_cpu_peak();
    reset_cpu_ledger_peak();
    m_modelled = !alloc_conf.empty();
    if (m_modelled) {
        // The run's own allocations only: what the process held before is not in the model.
        start_cpu_allocator_model(allocator::parse_alloc_conf(alloc_conf), cap_bytes);
        set_cpu_cap_bytes(0);
    } else {
        set_cpu_cap_bytes(cap_bytes, m_baseline);
    }
}

std::optional<ModuleLedger> MemoryMonitor::ledger_now() const {
    return m_device.is_cpu() ? std::optional(cpu_ledger_now()) : std::nullopt;
}

std::optional<ModuleLedger> MemoryMonitor::ledger_at_peak() const {
    return m_device.is_cpu() ? std::optional(cpu_ledger_at_peak()) : std::nullopt;
}

std::optional<Fragmentation> MemoryMonitor::free_space(
    [[maybe_unused]] std::int64_t requested) const {
#if OOMLAB_WITH_CUDA
    if (m_device.is_cuda()) {
        // As the allocator was when the request failed; without that record (no observer
        // called), as it is now.
        const int index = m_device.index();
        const std::optional<cuda::OomState> failed = cuda::last_oom_state(index);
        const FreeBlocks blocks = failed ? free_blocks_for(failed->segments, index, requested)
                                         : cuda::free_blocks(index, requested);
        Fragmentation result;
        result.requested_bytes = requested;
        result.reserved_free_bytes = blocks.bytes;
        result.largest_free_block = blocks.largest;
        result.free_blocks = blocks.count;
        // What a new segment could still get: the device's free memory, within the cap.
        if (failed) {
            const std::int64_t reserved = segment_usage(failed->segments, index).reserved;
            result.unreserved_free_bytes = std::min(
                failed->device_free, std::max<std::int64_t>(0, failed->allowed - reserved));
            return result;
        }
        std::int64_t unreserved = cuda::device_free_bytes(index);
        if (m_cap > 0) {
            const std::int64_t reserved = cuda::allocator_stats(index).reserved;
            unreserved =
                std::min(unreserved, std::max<std::int64_t>(0, m_baseline + m_cap - reserved));
        }
        result.unreserved_free_bytes = unreserved;
        return result;
    }
#endif
    // The model's own record of the refusal, which knows the exact request.
    return m_modelled ? cpu_allocator_model_last_refusal() : std::nullopt;
}

std::optional<std::int64_t> MemoryMonitor::cache_at_peak() const {
    if (!m_modelled) {
        return std::nullopt;
    }
    const std::optional<CpuModelPeak> peak = cpu_allocator_model_peak();
    return peak ? std::optional(peak->reserved - peak->allocated) : std::nullopt;
}

MemoryMonitor::~MemoryMonitor() {
#if OOMLAB_WITH_CUDA
    if (m_device.is_cuda()) {
        cuda::set_memory_fraction(m_device.index(), 1.0);
        return;
    }
#endif
    set_cpu_cap_bytes(0);
    if (m_modelled) {
        stop_cpu_allocator_model();
    }
}

MemorySample MemoryMonitor::sample() {
    MemorySample sample;
#if OOMLAB_WITH_CUDA
    if (m_device.is_cuda()) {
        const cuda::AllocatorStats stats = cuda::allocator_stats(m_device.index());
        sample.allocated = std::max<std::int64_t>(0, stats.allocated - m_baseline);
        sample.reserved = std::max<std::int64_t>(0, stats.reserved - m_baseline);
        sample.step_peak = std::max<std::int64_t>(0, stats.allocated_peak - m_baseline);
        sample.alloc_retries = stats.alloc_retries - m_retries_at_start;
        sample.oom_count = stats.ooms - m_ooms_at_start;
        if (const Nvml* nvml = Nvml::instance()) {
            if (const auto device = nvml->memory(m_pci_bus_id)) {
                sample.device_used = device->used;
                sample.device_total = device->total;
            }
        }
        m_run_peak = std::max(m_run_peak, sample.step_peak);
        return sample;
    }
#endif
    const CpuTensorStats stats = cpu_tensor_stats();
    sample.allocated = std::max<std::int64_t>(0, stats.current_bytes - m_baseline);
    sample.reserved = sample.allocated;
    if (m_modelled) {
        if (const auto model = cpu_allocator_model_stats()) {
            sample.reserved = model->reserved;
            sample.alloc_retries = model->retries;
        }
    }
    sample.step_peak = std::max<std::int64_t>(0, stats.peak_bytes - m_baseline);
    sample.device_used = process_rss_bytes();
    sample.oom_count = stats.oom_count - m_ooms_at_start;
    m_run_peak = std::max(m_run_peak, sample.step_peak);
    return sample;
}

void MemoryMonitor::begin_step() {
    sample();  // keep the finished step's peak in the run's peak
#if OOMLAB_WITH_CUDA
    if (m_device.is_cuda()) {
        cuda::reset_peak(m_device.index());
        return;
    }
#endif
    reset_cpu_peak();
}

std::string describe_allocator_state(const MemorySample& sample) {
    std::string text =
        "allocator after the failed step: allocated " + format_bytes(sample.allocated) +
        ", reserved " + format_bytes(sample.reserved) + ", step peak " +
        format_bytes(sample.step_peak) + ", OOMs " + std::to_string(sample.oom_count);
    if (sample.alloc_retries) {
        text += ", allocation retries " + std::to_string(*sample.alloc_retries);
    }
    if (sample.device_used && sample.device_total) {
        text += ", device " + format_bytes(*sample.device_used) + " used of " +
                format_bytes(*sample.device_total);
    }
    return text;
}

void release_cached_memory(const c10::Device& device) {
    if (device.is_cpu()) {
        malloc_trim(0);
        empty_cpu_allocator_model_cache();
    }
#if OOMLAB_WITH_CUDA
    if (device.is_cuda()) {
        cuda::empty_cache();
    }
#endif
}

}  // namespace oomlab::memory
