// Memory of the training device as a run sees it: bytes held by tensors now, the peak since
// the last step began, what the allocator reserves, and what the device uses in all.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <c10/core/Device.h>

#include "oomlab/measure/tracking_allocator.h"
#include "oomlab/run/run_record.h"

namespace oomlab::memory {

struct MemorySample {
    std::int64_t allocated = 0;
    std::int64_t reserved = 0;
    std::int64_t step_peak = 0;
    std::optional<std::int64_t> device_used;
    std::optional<std::int64_t> device_total;
    std::optional<std::int64_t> alloc_retries;  // cache flushes to retry an allocation (CUDA)
    std::int64_t oom_count = 0;                 // allocations refused since the run began
};

// Figures count from the run's start: what existed before (such as the prepared host copy of
// the table) is not the run's.
// CUDA: the caching allocator's statistics; device used and total from NVML when the library
// is there; memory.cap_mb through the allocator's memory fraction.
// CPU: tensor bytes from the tracking allocator. With memory.alloc_conf the caching allocator
// is modelled: reserved, the cache, retries and the free space at an OOM are the model's, and
// the cap bounds what it reserves; without, reserved equals allocated and the cap bounds the
// tensors' bytes. Device used is the process RSS, which also holds the freed memory the heap
// keeps for reuse (memory.empty_cache hands it back).
class MemoryMonitor {
public:
    // Starts counting; `cap_bytes` > 0 makes allocations past the cap fail with an OOM.
    // `alloc_conf`: memory.alloc_conf ("" for none).
    MemoryMonitor(const c10::Device& device, std::int64_t cap_bytes,
                  const std::string& alloc_conf = {});
    ~MemoryMonitor();  // lifts the cap

    MemorySample sample();
    void begin_step();  // the step peak restarts from what is allocated now
    std::int64_t run_peak() const { return m_run_peak; }

    // Bytes by module, now and at the run's peak. Only the CPU's tracking allocator can
    // attribute them; none on CUDA.
    std::optional<ModuleLedger> ledger_now() const;
    std::optional<ModuleLedger> ledger_at_peak() const;

    // The allocator's free space after an allocation of `requested` bytes failed. Only where
    // the allocator keeps blocks to split (CUDA, or its model on the CPU).
    std::optional<Fragmentation> free_space(std::int64_t requested) const;
    // What the allocator held reserved but unused when its blocks were at their highest,
    // where it is known (the model on the CPU). A failed step's end has freed its tensors.
    std::optional<std::int64_t> cache_at_peak() const;

private:
    c10::Device m_device;
    // Read only where CUDA is built in (clang warns of them elsewhere).
    [[maybe_unused]] std::int64_t m_cap = 0;
    std::int64_t m_baseline = 0;
    std::int64_t m_run_peak = 0;
    [[maybe_unused]] std::int64_t m_retries_at_start = 0;
    std::int64_t m_ooms_at_start = 0;
    bool m_modelled = false;   // CPU: the caching allocator modelled
    std::string m_pci_bus_id;  // CUDA: how NVML finds the device
};

// The allocator's figures in one line, for the event recorded at an OOM.
std::string describe_allocator_state(const MemorySample& sample);

// memory.empty_cache: hands cached, unused memory back (CPU: the heap's free pages to the
// system, so the process RSS drops, and the modelled allocator's cache; CUDA: the caching
// allocator's free blocks).
void release_cached_memory(const c10::Device& device);

}  // namespace oomlab::memory
