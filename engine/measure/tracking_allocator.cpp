#include "measure/tracking_allocator.h"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>

#include <ATen/core/Tensor.h>
#include <c10/core/CPUAllocator.h>

#include "oomlab/common/format.h"
#include "torch_utils/torch_compat.h"

namespace oomlab::memory {
namespace {

std::atomic<std::int64_t> g_current{0};
std::atomic<std::int64_t> g_peak{0};
std::atomic<std::int64_t> g_allocations{0};
std::atomic<std::int64_t> g_oom_count{0};
std::atomic<std::int64_t> g_cap{0};       // baseline + the run's cap; 0: none
std::atomic<std::int64_t> g_baseline{0};  // what the process held before the run

// The history is only kept while a snapshot is wanted; allocation checks one flag otherwise.
struct LiveBlock {
    std::int64_t size;
    AllocationTag tag;
};

struct History {
    std::mutex mutex;
    std::size_t max_events = 0;
    std::deque<TraceEvent> events;
    std::unordered_map<std::int64_t, LiveBlock> live;
};

std::atomic<bool> g_recording{false};

History& history() {
    static History instance;
    return instance;
}

std::int64_t now_us() {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// Whether an event starts one of the groups the history records (segment_alloc + alloc;
// free_requested + free_completed + segment_free; oom).
bool starts_group(TraceEvent::Action action) {
    return action == TraceEvent::Action::SegmentAlloc ||
           action == TraceEvent::Action::FreeRequested || action == TraceEvent::Action::Oom;
}

void record(History& h, TraceEvent::Action action, std::int64_t address, std::int64_t size,
            AllocationTag tag) {
    h.events.push_back({action, address, size, /*stream=*/0, now_us(), tag});
    // Only the oldest events go, and whole groups at a time: memory_viz pairs a free's
    // request with its completion and cannot undo half of one.
    if (h.events.size() > h.max_events) {
        do {
            h.events.pop_front();
        } while (!h.events.empty() && !starts_group(h.events.front().action));
    }
}

void record_allocation(const void* data, std::int64_t size) {
    if (size == 0) {
        return;  // an empty tensor holds no memory; memory_viz cannot place a 0-byte block
    }
    History& h = history();
    const auto address = reinterpret_cast<std::int64_t>(data);
    const AllocationTag tag = current_tag();
    std::lock_guard lock(h.mutex);
    h.live[address] = {size, tag};
    record(h, TraceEvent::Action::SegmentAlloc, address, size, tag);
    record(h, TraceEvent::Action::Alloc, address, size, tag);
}

void record_free(const void* data) {
    History& h = history();
    const auto address = reinterpret_cast<std::int64_t>(data);
    std::lock_guard lock(h.mutex);
    const auto block = h.live.find(address);
    if (block == h.live.end()) {
        return;  // allocated before recording began
    }
    const auto [size, tag] = block->second;
    h.live.erase(block);
    record(h, TraceEvent::Action::FreeRequested, address, size, tag);
    record(h, TraceEvent::Action::FreeCompleted, address, size, tag);
    record(h, TraceEvent::Action::SegmentFree, address, size, tag);
}

void record_oom(std::int64_t free_bytes, std::int64_t size) {
    History& h = history();
    std::lock_guard lock(h.mutex);
    record(h, TraceEvent::Action::Oom, free_bytes, size, current_tag());
}

constexpr std::size_t kAlignment = 64;  // what c10's CPU allocator uses for vectorised kernels

// The block's size and owner live in a header before the data, so the deleter needs no lookup.
// `serial` orders allocations: a block still alive that was allocated before the peak was
// alive at the peak.
struct alignas(kAlignment) BlockHeader {
    std::size_t size;
    std::int64_t serial;
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

void release_block(void* data) {
    if (!data) {
        return;
    }
    if (g_recording.load(std::memory_order_relaxed)) {
        record_free(data);
    }
    auto* header = static_cast<BlockHeader*>(data) - 1;
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

class TrackingAllocator final : public c10::Allocator {
public:
    c10::DataPtr allocate(std::size_t bytes) OOMLAB_ALLOCATOR_ALLOCATE_CONST override {
        const auto size = static_cast<std::int64_t>(bytes);
        const std::int64_t now = g_current.fetch_add(size, std::memory_order_relaxed) + size;
        const std::int64_t cap = g_cap.load(std::memory_order_relaxed);
        if (cap > 0 && now > cap) {
            g_current.fetch_sub(size, std::memory_order_relaxed);
            g_oom_count.fetch_add(1, std::memory_order_relaxed);
            if (g_recording.load(std::memory_order_relaxed)) {
                record_oom(cap - (now - size), size);
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
            TORCH_CHECK_WITH(OutOfMemoryError, false, "CPU out of memory. Tried to allocate ",
                             format_bytes(size), " and the system refused.");
        }
        auto* header = static_cast<BlockHeader*>(raw);
        header->size = bytes;
        header->serial = g_allocations.fetch_add(1, std::memory_order_relaxed);
        header->module = current_module();
        header->tag = current_tag();
        ledger_cell(header->module, header->tag).fetch_add(size, std::memory_order_relaxed);
        raise_peak(now);
        raise_ledger_peak(now);
        void* data = header + 1;
        if (g_recording.load(std::memory_order_relaxed)) {
            record_allocation(data, size);
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
        mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest allowed threshold
        mallopt(M_TRIM_THRESHOLD, 256 << 20);
        mallopt(M_TOP_PAD, 16 << 20);
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

void start_cpu_history(std::size_t max_events) {
    History& h = history();
    std::lock_guard lock(h.mutex);
    h.max_events = std::max<std::size_t>(1, max_events);
    h.events.clear();
    h.live.clear();
    g_recording.store(true);
}

void stop_cpu_history() {
    g_recording.store(false);
    History& h = history();
    std::lock_guard lock(h.mutex);
    h.events.clear();
    h.live.clear();
}

MemorySnapshot cpu_history_snapshot() {
    constexpr std::int64_t kLargeBlock = 1 << 20;  // the CUDA allocator's large-pool boundary
    History& h = history();
    std::lock_guard lock(h.mutex);
    MemorySnapshot snapshot;
    for (const auto& [address, block] : h.live) {
        SnapshotSegment& segment = snapshot.segments.emplace_back();
        segment.address = address;
        segment.total_size = block.size;
        segment.is_large = block.size >= kLargeBlock;
        segment.blocks.push_back(
            {block.size, block.size, SnapshotBlock::State::ActiveAllocated, block.tag});
    }
    std::sort(snapshot.segments.begin(), snapshot.segments.end(),
              [](const auto& a, const auto& b) { return a.address < b.address; });
    snapshot.device_traces.emplace_back(h.events.begin(), h.events.end());
    return snapshot;
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
