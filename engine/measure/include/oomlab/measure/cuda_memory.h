// The CUDA caching allocator and device, for builds whose LibTorch has CUDA
// (OOMLAB_WITH_CUDA); cuda_memory.cpp is only compiled there. Device arguments are CUDA
// device indices.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "oomlab/snapshot_writer/memory_snapshot.h"

namespace oomlab::memory::cuda {

// The figures torch.cuda.memory_stats() reports as allocated_bytes.all.*, reserved_bytes.all.*,
// num_alloc_retries and num_ooms.
struct AllocatorStats {
    std::int64_t allocated = 0;
    std::int64_t allocated_peak = 0;
    std::int64_t reserved = 0;
    std::int64_t reserved_peak = 0;
    std::int64_t alloc_retries = 0;
    std::int64_t ooms = 0;
};

AllocatorStats allocator_stats(int device);
void reset_peak(int device);
// The share of the device's memory the allocator may reserve (memory.cap_mb); 1 lifts it.
void set_memory_fraction(int device, double fraction);
std::int64_t total_bytes(int device);
std::string device_name(int device);  // "NVIDIA H200"
std::string pci_bus_id(int device);   // "0000:65:00.0", how NVML finds the same device
void empty_cache();
// memory.alloc_conf, in PYTORCH_CUDA_ALLOC_CONF's syntax: for the allocations from now on.
void set_allocator_settings(const std::string& conf);

// The blocks the allocator has reserved that no tensor holds, in the pool that would serve
// a request of `requested` bytes.
FreeBlocks free_blocks(int device, std::int64_t requested);
std::int64_t device_free_bytes(int device);  // cudaMemGetInfo's free

// The allocator as it was when an allocation failed: read by an out-of-memory observer, before
// the error unwinds the step and frees its tensors (after which the same figures describe
// another state: a step's freed activations look like a fragmented cache).
struct OomState {
    std::vector<SnapshotSegment> segments;
    std::int64_t allowed = 0;      // what the allocator may reserve: the cap, else the device
    std::int64_t device_free = 0;  // cudaMemGetInfo's free at the failure
};
// Starts keeping the state of each failure (once per process; later calls do nothing).
void watch_out_of_memory();
// The state at the last failure on `device` since clear_oom_state, if there was one.
std::optional<OomState> last_oom_state(int device);
void clear_oom_state(int device);

// The allocator's history with each allocation tagged (see allocation_tag.h).
void start_history(std::size_t max_events);
void stop_history();
MemorySnapshot history_snapshot();

}  // namespace oomlab::memory::cuda
