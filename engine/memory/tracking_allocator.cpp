#include "tracking_allocator.h"

#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include <c10/core/CPUAllocator.h>

#include "../train/torch_compat.h"

namespace oomlab::memory {
namespace {

std::atomic<std::int64_t> g_current{0};
std::atomic<std::int64_t> g_peak{0};
std::atomic<std::int64_t> g_allocations{0};
std::atomic<std::int64_t> g_oom_count{0};
std::atomic<std::int64_t> g_cap{0};

constexpr std::size_t kAlignment = 64;  // what c10's CPU allocator uses for vectorised kernels

// The block's size lives in a header before the data, so the deleter needs no lookup.
struct alignas(kAlignment) BlockHeader {
    std::size_t size;
};

void release_block(void* data) {
    if (!data) {
        return;
    }
    auto* header = static_cast<BlockHeader*>(data) - 1;
    g_current.fetch_sub(static_cast<std::int64_t>(header->size), std::memory_order_relaxed);
    std::free(header);
}

void raise_peak(std::int64_t current) {
    std::int64_t peak = g_peak.load(std::memory_order_relaxed);
    while (current > peak && !g_peak.compare_exchange_weak(peak, current)) {
    }
}

std::string mib(std::int64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f MiB", static_cast<double>(bytes) / (1 << 20));
    return text;
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
            // Same wording as the CUDA caching allocator, so one handler serves both.
            TORCH_CHECK_WITH(OutOfMemoryError, false, "CPU out of memory. Tried to allocate ",
                             mib(size), " (capacity ", mib(cap), "; ", mib(now - size),
                             " already allocated by tensors).");
        }
        raise_peak(now);
        g_allocations.fetch_add(1, std::memory_order_relaxed);
        void* raw = nullptr;
        if (posix_memalign(&raw, kAlignment, sizeof(BlockHeader) + bytes) != 0) {
            g_current.fetch_sub(size, std::memory_order_relaxed);
            TORCH_CHECK_WITH(OutOfMemoryError, false, "CPU out of memory. Tried to allocate ",
                             mib(size), " and the system refused.");
        }
        auto* header = static_cast<BlockHeader*>(raw);
        header->size = bytes;
        void* data = header + 1;
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

void reset_cpu_peak() { g_peak.store(g_current.load()); }

void set_cpu_cap_bytes(std::int64_t bytes) { g_cap.store(bytes); }

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
