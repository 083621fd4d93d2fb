// A CPU allocator that counts the bytes held by tensors, keeps the peak, and enforces a
// simulated device capacity by throwing the out-of-memory error the CUDA allocator throws.
// Installed once per process (c10::SetCPUAllocator); it forwards to the default allocator.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "memory/allocation_tag.h"
#include "memory/memory_snapshot.h"
#include "memory/module_scope.h"

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

// Allocation history for memory snapshots (debug.memory_snapshot). While recording, every
// tensor allocation and free is traced with the current allocation tag, keeping the latest
// `max_events`. Each heap block is its own segment, as the CPU has no caching allocator.
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
