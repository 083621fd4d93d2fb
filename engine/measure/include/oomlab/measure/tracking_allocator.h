// A CPU allocator that counts the bytes held by tensors, keeps the peak, and enforces a
// simulated device capacity by throwing the out-of-memory error the CUDA allocator throws.
// Installed once per process (c10::SetCPUAllocator); it forwards to the default allocator.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "oomlab/allocator/caching_allocator_model.h"
#include "oomlab/run/fragmentation.h"
#include "oomlab/snapshot_writer/allocation_tag.h"
#include "oomlab/snapshot_writer/memory_snapshot.h"
#include "oomlab/snapshot_writer/module_scope.h"

namespace at {
class Tensor;
}

namespace oomlab::memory {

struct CpuTensorStats {
    std::int64_t current_bytes = 0;
    std::int64_t peak_bytes = 0;
    std::int64_t allocations = 0;  // since the process started
    std::int64_t oom_count = 0;    // allocations refused by the cap
};

// Idempotent; safe from any thread.
void install_tracking_allocator();

CpuTensorStats cpu_tensor_stats();
void reset_cpu_peak();  // peak := current

// Caps the bytes tensors may hold at `baseline + cap` (0 removes the cap): `baseline` is what
// the process held before the run, which the cap does not count. Messages speak of the run's
// own bytes and its cap, the figures the user set and sees.
void set_cpu_cap_bytes(std::int64_t cap, std::int64_t baseline = 0);

// On the CPU, PyTorch's CUDA caching allocator modelled (memory.alloc_conf): from now on every
// tensor allocation is made in the model too, which reserves segments, caches what is freed,
// and refuses what it cannot reserve within `capacity` (0: no limit) even after releasing its
// cache, as the CUDA allocator does under a memory fraction; set_cpu_cap_bytes's cap is then
// left at 0. Blocks allocated before the model started are not in it.
void start_cpu_allocator_model(const allocator::AllocatorSettings& settings, std::int64_t capacity);
void stop_cpu_allocator_model();
std::optional<allocator::ModelStats> cpu_allocator_model_stats();  // nullopt: none runs
// The model's blocks handed out and segments reserved when the most was handed out.
struct CpuModelPeak {
    std::int64_t allocated = 0;
    std::int64_t reserved = 0;
};
std::optional<CpuModelPeak> cpu_allocator_model_peak();
// The model's free space when it last refused an allocation, taken at that moment.
std::optional<Fragmentation> cpu_allocator_model_last_refusal();
void empty_cpu_allocator_model_cache();  // torch.cuda.empty_cache()

// Allocation history for memory snapshots (debug.memory_snapshot). While recording, every
// tensor allocation and free is traced with the current allocation tag, keeping the latest
// `max_events`. Each heap block is its own segment, unless the allocator is modelled.
void start_cpu_history(std::size_t max_events);
void stop_cpu_history();
MemorySnapshot cpu_history_snapshot();  // the tensors alive now and the trace so far

// Tensor bytes held now, by the module that allocated them (memory::current_module()) and
// by tag: what each module's forward saved, its backward's temporaries, its gradients.
struct ModuleLedger {
    std::array<std::array<std::int64_t, kAllocationTagCount>, kMaxModules> bytes{};
    std::int64_t total = 0;  // all tensor bytes of the process when it was taken

    std::int64_t held(ModuleId module, AllocationTag tag) const {
        return bytes[module][static_cast<std::size_t>(tag)];
    }
};
ModuleLedger cpu_ledger_now();
// The ledger at the most tensor bytes held since reset_cpu_ledger_peak() (a run's start).
ModuleLedger cpu_ledger_at_peak();
void reset_cpu_ledger_peak();

// Counts the tensor's memory as `tag` of `module` from now on: a gradient or optimizer state
// was allocated as a temporary of some phase. Memory the tracking allocator did not allocate
// (CUDA, borrowed buffers) is left alone.
void retag_tensor(const at::Tensor& tensor, AllocationTag tag, ModuleId module);

// Resident set size of this process (from /proc/self/statm); 0 when unknown.
std::int64_t process_rss_bytes();

}  // namespace oomlab::memory
