#include "oomlab/measure/cuda_memory.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <map>
#include <mutex>

#include "oomlab/common/errors.h"
#include "oomlab/torch_utils/torch_compat.h"

namespace oomlab::memory::cuda {
namespace {

namespace allocator = c10::cuda::CUDACachingAllocator;

c10::DeviceIndex index_of(int device) {
    return static_cast<c10::DeviceIndex>(device);
}

// The caching allocator sets up its devices when CUDA is first used; before that its
// statistics and history calls see no device. An empty CUDA tensor initialises CUDA the way
// every LibTorch version does it (the initialising function itself was renamed in 2.x).
void initialize_cuda() {
    static std::once_flag once;
    std::call_once(once, [] { at::empty({0}, at::TensorOptions().device(c10::kCUDA)); });
}

// The allocator keeps whatever context the recorder returns with each allocation; the engine
// returns its allocation tag, shared per tag so recording costs no allocation.
struct TagContext final : c10::GatheredContext {
    explicit TagContext(AllocationTag allocation_tag) : tag(allocation_tag) {}
    AllocationTag tag;
};

std::shared_ptr<c10::GatheredContext> record_tag() {
    static const auto contexts = [] {
        std::array<std::shared_ptr<c10::GatheredContext>, 7> all;
        for (std::size_t i = 0; i < all.size(); ++i) {
            all[i] = std::make_shared<TagContext>(static_cast<AllocationTag>(i));
        }
        return all;
    }();
    return contexts.at(static_cast<std::size_t>(current_tag()));
}

AllocationTag tag_of(const std::shared_ptr<c10::GatheredContext>& context) {
    const auto* tagged = dynamic_cast<const TagContext*>(context.get());
    return tagged ? tagged->tag : AllocationTag::Untagged;
}

bool convert_action(allocator::TraceEntry::Action action, TraceEvent::Action& out) {
    using Entry = allocator::TraceEntry;
    using A = TraceEvent::Action;
    switch (action) {
        case Entry::ALLOC:
            out = A::Alloc;
            return true;
        case Entry::FREE_REQUESTED:
            out = A::FreeRequested;
            return true;
        case Entry::FREE_COMPLETED:
            out = A::FreeCompleted;
            return true;
        case Entry::SEGMENT_ALLOC:
            out = A::SegmentAlloc;
            return true;
        case Entry::SEGMENT_FREE:
            out = A::SegmentFree;
            return true;
        case Entry::SEGMENT_MAP:
            out = A::SegmentMap;
            return true;
        case Entry::SEGMENT_UNMAP:
            out = A::SegmentUnmap;
            return true;
        case Entry::SNAPSHOT:
            out = A::Snapshot;
            return true;
        case Entry::OOM:
            out = A::Oom;
            return true;
        default:
            return false;  // actions of later LibTorch versions memory_viz may not know
    }
}

SnapshotBlock::State block_state(const allocator::BlockInfo& block) {
    if (block.allocated) {
        return SnapshotBlock::State::ActiveAllocated;
    }
    return block.active ? SnapshotBlock::State::ActivePendingFree : SnapshotBlock::State::Inactive;
}

std::vector<SnapshotSegment> segments_of(const allocator::SnapshotInfo& info) {
    std::vector<SnapshotSegment> segments;
    segments.reserve(info.segments.size());
    for (const allocator::SegmentInfo& from : info.segments) {
        SnapshotSegment& segment = segments.emplace_back();
        segment.device = from.device;
        segment.address = static_cast<std::int64_t>(from.address);
        segment.total_size = static_cast<std::int64_t>(from.total_size);
        segment.stream = reinterpret_cast<std::int64_t>(from.stream);
        segment.is_large = from.is_large;
        segment.is_expandable = compat::segment_is_expandable(from);
        for (const allocator::BlockInfo& block : from.blocks) {
            segment.blocks.push_back({static_cast<std::int64_t>(block.size),
                                      static_cast<std::int64_t>(block.requested_size),
                                      block_state(block), tag_of(block.context_when_allocated)});
        }
    }
    return segments;
}

}  // namespace

AllocatorStats allocator_stats(int device) {
    initialize_cuda();
    const allocator::DeviceStats stats = allocator::getDeviceStats(index_of(device));
    const std::size_t all = compat::kAggregateStat;
    AllocatorStats result;
    result.allocated = stats.allocated_bytes[all].current;
    result.allocated_peak = stats.allocated_bytes[all].peak;
    result.reserved = stats.reserved_bytes[all].current;
    result.reserved_peak = stats.reserved_bytes[all].peak;
    result.alloc_retries = stats.num_alloc_retries;
    result.ooms = stats.num_ooms;
    return result;
}

void reset_peak(int device) {
    initialize_cuda();
    allocator::resetPeakStats(index_of(device));
}

void set_memory_fraction(int device, double fraction) {
    initialize_cuda();
    allocator::setMemoryFraction(fraction, index_of(device));
}

std::int64_t total_bytes(int device) {
    return static_cast<std::int64_t>(at::cuda::getDeviceProperties(device)->totalGlobalMem);
}

std::string device_name(int device) {
    return at::cuda::getDeviceProperties(device)->name;
}

std::string pci_bus_id(int device) {
    char id[32] = {};
    if (cudaDeviceGetPCIBusId(id, sizeof id, device) != cudaSuccess) {
        return "";
    }
    return id;
}

void empty_cache() {
    initialize_cuda();
    allocator::emptyCache();
}

void set_allocator_settings(const std::string& conf) {
    compat::set_cuda_allocator_settings(conf);
}

FreeBlocks free_blocks(int device, std::int64_t requested) {
    initialize_cuda();
    return free_blocks_for(segments_of(allocator::snapshot()), device, requested);
}

std::int64_t device_free_bytes(int device) {
    initialize_cuda();
    const c10::cuda::CUDAGuard guard(index_of(device));
    std::size_t free = 0;
    std::size_t total = 0;
    return cudaMemGetInfo(&free, &total) == cudaSuccess ? static_cast<std::int64_t>(free) : 0;
}

namespace {

struct OomStates {
    std::mutex mutex;
    std::map<int, OomState> by_device;
};

OomStates& oom_states() {
    static OomStates states;
    return states;
}

}  // namespace

void watch_out_of_memory() {
    static std::once_flag once;
    std::call_once(once, [] {
        initialize_cuda();
        // Called on the failing thread (the training thread or autograd's), after the allocator
        // released its cached segments and let go of its lock, before the error is thrown.
        allocator::attachOutOfMemoryObserver([](std::int64_t device, std::size_t /*requested*/,
                                                std::size_t allowed, std::size_t device_free) {
            OomState state;
            state.segments = segments_of(allocator::snapshot());
            state.allowed = static_cast<std::int64_t>(allowed);
            state.device_free = static_cast<std::int64_t>(device_free);
            OomStates& states = oom_states();
            const std::lock_guard<std::mutex> lock(states.mutex);
            states.by_device[static_cast<int>(device)] = std::move(state);
        });
    });
}

std::optional<OomState> last_oom_state(int device) {
    OomStates& states = oom_states();
    const std::lock_guard<std::mutex> lock(states.mutex);
    const auto found = states.by_device.find(device);
    return found == states.by_device.end() ? std::nullopt : std::optional(found->second);
}

void clear_oom_state(int device) {
    OomStates& states = oom_states();
    const std::lock_guard<std::mutex> lock(states.mutex);
    states.by_device.erase(device);
}

void start_history(std::size_t max_events) {
    initialize_cuda();
    compat::record_cuda_history(true, &record_tag, max_events);
}

// Disabling takes a buffer size of 1, as torch.cuda.memory._record_memory_history(None) does.
void stop_history() {
    compat::record_cuda_history(false, nullptr, 1);
}

MemorySnapshot history_snapshot() {
    initialize_cuda();
    const allocator::SnapshotInfo info = allocator::snapshot();
    MemorySnapshot snapshot;
    snapshot.segments = segments_of(info);
    for (const auto& trace : info.device_traces) {
        std::vector<TraceEvent>& events = snapshot.device_traces.emplace_back();
        for (const allocator::TraceEntry& entry : trace) {
            TraceEvent event;
            if (!convert_action(entry.action_, event.action)) {
                continue;
            }
            event.address = entry.addr_;
            event.size = static_cast<std::int64_t>(entry.size_);
            event.stream = reinterpret_cast<std::int64_t>(entry.stream_);
            event.time_us = compat::trace_time_us(entry);
            event.tag = tag_of(entry.context_);
            events.push_back(event);
        }
    }
    return snapshot;
}

}  // namespace oomlab::memory::cuda
