#include "oomlab/measure/tracking_allocator.h"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/CPUAllocator.h>

#include "cpu_history.h"
#include "oomlab/common/format.h"
#include "oomlab/common/freed_memory.h"
#include "oomlab/torch_utils/torch_compat.h"

namespace oomlab::memory {
namespace {

std::atomic<std::int64_t> g_current{0};
std::atomic<std::int64_t> g_peak{0};
std::atomic<std::int64_t> g_allocations{0};
std::atomic<std::int64_t> g_oom_count{0};
std::atomic<std::int64_t> g_cap{0};       // baseline + the run's cap; 0: none
std::atomic<std::int64_t> g_baseline{0};  // what the process held before the run

// PyTorch's caching allocator modelled (memory.alloc_conf): every tensor allocation is made in
// it too, at an address of its own. `generation` tells a block of an earlier run's model, which
// the present one does not know, from its own.
struct Modelled {
    std::mutex mutex;
    std::unique_ptr<allocator::CachingAllocatorModel> model;
    std::uint32_t generation = 0;
    std::optional<Fragmentation> last_refusal;  // its free space when it failed
    CpuModelPeak peak;
};

std::atomic<bool> g_modelled{false};

Modelled& modelled() {
    static Modelled instance;
    return instance;
}

constexpr std::size_t kAlignment = 64;  // what c10's CPU allocator uses for vectorised kernels

// The block's size and owner live in a header before the data, so the deleter needs no lookup.
// `serial` orders allocations: a block still alive that was allocated before the peak was
// alive at the peak.
struct alignas(kAlignment) BlockHeader {
    std::size_t size;
    std::int64_t serial;
    std::int64_t model_address;  // -1: not made in the allocator model
    std::uint32_t model_generation;
    ModuleId module;
    AllocationTag tag;
};

// The module ledger: live bytes by module and tag, and a copy taken at the highest total.
struct Ledger {
    std::array<std::array<std::atomic<std::int64_t>, kAllocationTagCount>, kMaxModules> live{};
    std::atomic<std::int64_t> peak{0};
    std::mutex peak_mutex;  // guards at_peak and peak_serial
    ModuleLedger at_peak;
    std::int64_t peak_serial = 0;  // blocks of a lower serial are in at_peak
};

Ledger& ledger() {
    static Ledger instance;
    return instance;
}

std::atomic<std::int64_t>& ledger_cell(ModuleId module, AllocationTag tag) {
    return ledger().live[module][static_cast<std::size_t>(tag)];
}

ModuleLedger copy_ledger(const Ledger& l) {
    ModuleLedger copy;
    // Only the modules registered so far can hold bytes: a model has ~10 of the 64 rows.
    const std::size_t modules = module_count();
    for (std::size_t module = 0; module < modules; ++module) {
        for (std::size_t tag = 0; tag < kAllocationTagCount; ++tag) {
            copy.bytes[module][tag] = l.live[module][tag].load(std::memory_order_relaxed);
        }
    }
    copy.total = g_current.load(std::memory_order_relaxed);
    return copy;
}

// A new high: keep what each module held. Rare after the first step, so a lock is cheap.
void raise_ledger_peak(std::int64_t current) {
    Ledger& l = ledger();
    if (current <= l.peak.load(std::memory_order_relaxed)) {
        return;
    }
    std::lock_guard lock(l.peak_mutex);
    if (current > l.peak.load(std::memory_order_relaxed)) {
        l.peak.store(current, std::memory_order_relaxed);
        l.at_peak = copy_ledger(l);
        l.peak_serial = g_allocations.load(std::memory_order_relaxed);
    }
}

// A block becomes what it is (a gradient, optimizer state) after autograd or the optimizer
// allocated it: a hook or the update says so later. If it was alive at the peak, the peak's
// copy learns it too, so what the peak held does not depend on when the peak fell. The move
// is made under the peak's lock, so a copy another thread takes at a new peak sees the block
// under one name: before the move (which then reaches the copy) or after it. Outside the lock,
// a copy taken between the two found it under its old name, and no later move corrected it.
void retag_block(BlockHeader& block, ModuleId module, AllocationTag tag) {
    Ledger& l = ledger();
    const auto size = static_cast<std::int64_t>(block.size);
    std::lock_guard lock(l.peak_mutex);
    if (block.serial < l.peak_serial) {  // alive at the peak
        l.at_peak.bytes[block.module][static_cast<std::size_t>(block.tag)] -= size;
        l.at_peak.bytes[module][static_cast<std::size_t>(tag)] += size;
    }
    ledger_cell(block.module, block.tag).fetch_sub(size, std::memory_order_relaxed);
    block.module = module;
    block.tag = tag;
    ledger_cell(module, tag).fetch_add(size, std::memory_order_relaxed);
}

// Hands the block back to the model that made it, if it is still the one in use.
void free_in_model(const BlockHeader& header) {
    Modelled& m = modelled();
    std::lock_guard lock(m.mutex);
    if (!m.model || header.model_generation != m.generation) {
        return;
    }
    m.model->free(header.model_address);
    if (history::recording()) {
        history::record_free(header.model_address);
    }
}

void release_block(void* data) {
    if (!data) {
        return;
    }
    auto* header = static_cast<BlockHeader*>(data) - 1;
    if (header->model_address >= 0) {
        free_in_model(*header);
    } else if (history::recording()) {
        history::record_block_free(reinterpret_cast<std::int64_t>(data));
    }
    const auto size = static_cast<std::int64_t>(header->size);
    ledger_cell(header->module, header->tag).fetch_sub(size, std::memory_order_relaxed);
    g_current.fetch_sub(size, std::memory_order_relaxed);
    std::free(header);
}

void raise_peak(std::int64_t current) {
    std::int64_t peak = g_peak.load(std::memory_order_relaxed);
    while (current > peak && !g_peak.compare_exchange_weak(peak, current)) {
    }
}

// The model's address for `size` bytes, or -1 when no model runs; throws the out-of-memory
// error when the model cannot reserve them within its capacity, after releasing its cache.
std::int64_t allocate_in_model(std::int64_t size, std::uint32_t& generation) {
    Modelled& m = modelled();
    std::lock_guard lock(m.mutex);
    if (!m.model || size == 0) {
        return -1;  // a 0-byte request takes no block, as on CUDA
    }
    allocator::CachingAllocatorModel& model = *m.model;
    const std::optional<std::int64_t> address = model.allocate(size, /*stream=*/0);
    const bool recording = history::recording();
    const std::vector<allocator::SegmentChange> changes = model.take_segment_changes();
    if (recording) {
        history::record_segment_changes(changes);
    }
    if (!address) {
        g_oom_count.fetch_add(1, std::memory_order_relaxed);
        const std::int64_t capacity = model.capacity();
        if (recording) {
            history::record_oom(capacity - model.reserved(), size);
        }
        const allocator::ModelStats stats = model.stats();
        // Taken now: by the time the error is handled, the failed step's tensors are freed.
        // Only the request's own pool could have served it.
        const allocator::ModelStats pool = model.stats_for(size);
        m.last_refusal = Fragmentation{size, pool.cached_free, pool.largest_free, pool.free_blocks,
                                       capacity - stats.reserved};
        TORCH_CHECK_WITH(OutOfMemoryError, false, "CPU out of memory. Tried to allocate ",
                         format_bytes(size), ". Of the run's ", format_bytes(capacity),
                         " cap (memory.cap_mb), the caching allocator (memory.alloc_conf) has ",
                         format_bytes(stats.reserved), " reserved: ", format_bytes(stats.allocated),
                         " allocated to tensors and ", format_bytes(stats.cached_free),
                         " reserved but unallocated, the largest free block ",
                         format_bytes(stats.largest_free), ".");
    }
    generation = m.generation;
    if (model.allocated() > m.peak.allocated) {
        m.peak = {model.allocated(), model.reserved()};
    }
    if (recording) {
        history::record_allocation(*address, size);
    }
    return *address;
}

class TrackingAllocator final : public c10::Allocator {
public:
    c10::DataPtr allocate(std::size_t bytes) OOMLAB_ALLOCATOR_ALLOCATE_CONST override {
        const auto size = static_cast<std::int64_t>(bytes);
        std::uint32_t generation = 0;
        const std::int64_t model_address =
            g_modelled.load(std::memory_order_relaxed) ? allocate_in_model(size, generation) : -1;
        const std::int64_t now = g_current.fetch_add(size, std::memory_order_relaxed) + size;
        const std::int64_t cap = g_cap.load(std::memory_order_relaxed);
        if (cap > 0 && now > cap) {
            g_current.fetch_sub(size, std::memory_order_relaxed);
            g_oom_count.fetch_add(1, std::memory_order_relaxed);
            if (history::recording()) {
                history::record_oom(cap - (now - size), size);
            }
            // Opens as the CUDA caching allocator's does, so one handler serves both. The
            // figures are the run's own: its cap (memory.cap_mb) and what it held.
            const std::int64_t baseline = g_baseline.load(std::memory_order_relaxed);
            TORCH_CHECK_WITH(OutOfMemoryError, false, "CPU out of memory. Tried to allocate ",
                             format_bytes(size), " while the run's tensors held ",
                             format_bytes(now - size - baseline), " of its ",
                             format_bytes(cap - baseline), " cap (memory.cap_mb).");
        }
        void* raw = nullptr;
        if (posix_memalign(&raw, kAlignment, sizeof(BlockHeader) + bytes) != 0) {
            g_current.fetch_sub(size, std::memory_order_relaxed);
            if (model_address >= 0) {
                BlockHeader unused{};
                unused.model_address = model_address;
                unused.model_generation = generation;
                free_in_model(unused);
            }
            TORCH_CHECK_WITH(OutOfMemoryError, false, "CPU out of memory. Tried to allocate ",
                             format_bytes(size), " and the system refused.");
        }
        auto* header = static_cast<BlockHeader*>(raw);
        header->size = bytes;
        header->model_address = model_address;
        header->model_generation = generation;
        header->serial = g_allocations.fetch_add(1, std::memory_order_relaxed);
        header->module = current_module();
        header->tag = current_tag();
        ledger_cell(header->module, header->tag).fetch_add(size, std::memory_order_relaxed);
        raise_peak(now);
        raise_ledger_peak(now);
        void* data = header + 1;
        if (model_address < 0 && history::recording()) {
            history::record_block_allocation(reinterpret_cast<std::int64_t>(data), size);
        }
        return {data, data, &release_block, c10::Device(c10::DeviceType::CPU)};
    }

    c10::DeleterFnPtr raw_deleter() const override { return &release_block; }

#if OOMLAB_ALLOCATOR_HAS_COPY_DATA
    void copy_data(void* destination, const void* source, std::size_t count) const override {
        std::memcpy(destination, source, count);
    }
#endif
};

}  // namespace

void install_tracking_allocator() {
    static std::once_flag once;
    std::call_once(once, [] {
        // Training frees and re-allocates the same large blocks every step. glibc would map and
        // unmap each one (page faults, zeroing: 3x slower on the TREC bag benchmark); keeping
        // them in the heap makes it reuse them, as a caching allocator would.
        keep_freed_memory_for_reuse();
        static TrackingAllocator allocator;
        // Priority above the default so a later default registration cannot replace it.
        c10::SetCPUAllocator(&allocator, /*priority=*/100);
    });
}

CpuTensorStats cpu_tensor_stats() {
    return {g_current.load(), g_peak.load(), g_allocations.load(), g_oom_count.load()};
}

void reset_cpu_peak() {
    g_peak.store(g_current.load());
}

void set_cpu_cap_bytes(std::int64_t cap, std::int64_t baseline) {
    g_baseline.store(baseline);
    g_cap.store(cap > 0 ? baseline + cap : 0);
}

ModuleLedger cpu_ledger_now() {
    return copy_ledger(ledger());
}

ModuleLedger cpu_ledger_at_peak() {
    Ledger& l = ledger();
    std::lock_guard lock(l.peak_mutex);
    return l.at_peak;
}

void reset_cpu_ledger_peak() {
    Ledger& l = ledger();
    std::lock_guard lock(l.peak_mutex);
    l.at_peak = copy_ledger(l);
    l.peak_serial = g_allocations.load(std::memory_order_relaxed);
    l.peak.store(l.at_peak.total, std::memory_order_relaxed);
}

void retag_tensor(const at::Tensor& tensor, AllocationTag tag, ModuleId module) {
    if (!tensor.defined()) {
        return;
    }
    if (tensor.is_sparse()) {
        retag_tensor(tensor._indices(), tag, module);
        retag_tensor(tensor._values(), tag, module);
        return;
    }
    if (!tensor.has_storage()) {
        return;
    }
    const c10::DataPtr& data = tensor.storage().data_ptr();
    if (data.get_deleter() != &release_block || data.get() == nullptr) {
        return;
    }
    auto* header = static_cast<BlockHeader*>(data.get()) - 1;
    if (header->module == module && header->tag == tag) {
        return;
    }
    retag_block(*header, module, tag);
}

void start_cpu_allocator_model(const allocator::AllocatorSettings& settings,
                               std::int64_t capacity) {
    Modelled& m = modelled();
    std::lock_guard lock(m.mutex);
    m.model = std::make_unique<allocator::CachingAllocatorModel>(settings, capacity);
    m.model->keep_segment_changes(true);
    m.last_refusal.reset();
    m.peak = {};
    ++m.generation;
    g_modelled.store(true);
}

void stop_cpu_allocator_model() {
    Modelled& m = modelled();
    std::lock_guard lock(m.mutex);
    g_modelled.store(false);
    m.model.reset();
}

std::optional<allocator::ModelStats> cpu_allocator_model_stats() {
    Modelled& m = modelled();
    std::lock_guard lock(m.mutex);
    return m.model ? std::optional(m.model->stats()) : std::nullopt;
}

std::optional<CpuModelPeak> cpu_allocator_model_peak() {
    Modelled& m = modelled();
    std::lock_guard lock(m.mutex);
    return m.model ? std::optional(m.peak) : std::nullopt;
}

std::optional<Fragmentation> cpu_allocator_model_last_refusal() {
    Modelled& m = modelled();
    std::lock_guard lock(m.mutex);
    return m.last_refusal;
}

void empty_cpu_allocator_model_cache() {
    Modelled& m = modelled();
    std::lock_guard lock(m.mutex);
    if (!m.model) {
        return;
    }
    m.model->empty_cache();
    std::vector<allocator::SegmentChange> changes = m.model->take_segment_changes();
    if (history::recording()) {
        history::record_segment_changes(changes);
    }
}

MemorySnapshot cpu_history_snapshot() {
    Modelled& m = modelled();
    std::lock_guard lock(m.mutex);
    return history::snapshot(m.model.get());
}

std::int64_t process_rss_bytes() {
    std::FILE* file = std::fopen("/proc/self/statm", "r");
    if (!file) {
        return 0;
    }
    long total_pages = 0;
    long resident_pages = 0;
    const int read = std::fscanf(file, "%ld %ld", &total_pages, &resident_pages);
    std::fclose(file);
    return read == 2 ? resident_pages * sysconf(_SC_PAGESIZE) : 0;
}

}  // namespace oomlab::memory
