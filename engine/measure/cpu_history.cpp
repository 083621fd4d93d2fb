#include "cpu_history.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <unordered_map>

#include "oomlab/measure/tracking_allocator.h"

namespace oomlab::memory {
namespace {

struct LiveBlock {
    std::int64_t size;
    AllocationTag tag;
};

// An event and whether the oldest events may be dropped up to it: memory_viz pairs a free's
// request with its completion, and a segment's opening with the block it opened for, and
// cannot undo half of one.
struct Recorded {
    TraceEvent event;
    bool starts_group;
};

struct History {
    std::mutex mutex;
    std::size_t max_events = 0;
    std::deque<Recorded> events;
    std::unordered_map<std::int64_t, LiveBlock> live;
};

std::atomic<bool> g_recording{false};

History& instance() {
    static History history;
    return history;
}

std::int64_t now_us() {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// Only the oldest events go, and whole groups at a time.
void record(History& h, TraceEvent::Action action, std::int64_t address, std::int64_t size,
            AllocationTag tag, bool starts_group) {
    h.events.push_back({{action, address, size, /*stream=*/0, now_us(), tag}, starts_group});
    if (h.events.size() > h.max_events) {
        do {
            h.events.pop_front();
        } while (!h.events.empty() && !h.events.front().starts_group);
    }
}

TraceEvent::Action action_of(allocator::SegmentChange::Kind kind) {
    switch (kind) {
        case allocator::SegmentChange::Kind::Alloc:
            return TraceEvent::Action::SegmentAlloc;
        case allocator::SegmentChange::Kind::Free:
            return TraceEvent::Action::SegmentFree;
        case allocator::SegmentChange::Kind::Map:
            return TraceEvent::Action::SegmentMap;
        case allocator::SegmentChange::Kind::Unmap:
            return TraceEvent::Action::SegmentUnmap;
    }
    return TraceEvent::Action::SegmentAlloc;
}

SnapshotBlock::State state_of(bool allocated) {
    return allocated ? SnapshotBlock::State::ActiveAllocated : SnapshotBlock::State::Inactive;
}

}  // namespace

void start_cpu_history(std::size_t max_events) {
    History& h = instance();
    std::lock_guard lock(h.mutex);
    h.max_events = std::max<std::size_t>(2, max_events);
    h.events.clear();
    h.live.clear();
    g_recording.store(true);
}

void stop_cpu_history() {
    g_recording.store(false);
    History& h = instance();
    std::lock_guard lock(h.mutex);
    h.events.clear();
    h.live.clear();
}

namespace history {

bool recording() {
    return g_recording.load(std::memory_order_relaxed);
}

void record_block_allocation(std::int64_t address, std::int64_t size) {
    if (size == 0) {
        return;  // an empty tensor holds no memory; memory_viz cannot place a 0-byte block
    }
    History& h = instance();
    const AllocationTag tag = current_tag();
    std::lock_guard lock(h.mutex);
    h.live[address] = {size, tag};
    record(h, TraceEvent::Action::SegmentAlloc, address, size, tag, true);
    record(h, TraceEvent::Action::Alloc, address, size, tag, false);
}

void record_block_free(std::int64_t address) {
    History& h = instance();
    std::lock_guard lock(h.mutex);
    const auto block = h.live.find(address);
    if (block == h.live.end()) {
        return;  // allocated before recording began
    }
    const auto [size, tag] = block->second;
    h.live.erase(block);
    record(h, TraceEvent::Action::FreeRequested, address, size, tag, true);
    record(h, TraceEvent::Action::FreeCompleted, address, size, tag, false);
    record(h, TraceEvent::Action::SegmentFree, address, size, tag, false);
}

void record_segment_changes(const std::vector<allocator::SegmentChange>& changes) {
    if (changes.empty()) {
        return;
    }
    History& h = instance();
    const AllocationTag tag = current_tag();
    std::lock_guard lock(h.mutex);
    for (const allocator::SegmentChange& change : changes) {
        record(h, action_of(change.kind), change.address, change.size, tag, true);
    }
}

void record_allocation(std::int64_t address, std::int64_t size) {
    History& h = instance();
    const AllocationTag tag = current_tag();
    std::lock_guard lock(h.mutex);
    h.live[address] = {size, tag};
    // A segment opened for it came just before and is dropped with it.
    const bool opened =
        !h.events.empty() && (h.events.back().event.action == TraceEvent::Action::SegmentAlloc ||
                              h.events.back().event.action == TraceEvent::Action::SegmentMap);
    record(h, TraceEvent::Action::Alloc, address, size, tag, !opened);
}

void record_free(std::int64_t address) {
    History& h = instance();
    std::lock_guard lock(h.mutex);
    const auto block = h.live.find(address);
    if (block == h.live.end()) {
        return;
    }
    const auto [size, tag] = block->second;
    h.live.erase(block);
    record(h, TraceEvent::Action::FreeRequested, address, size, tag, true);
    record(h, TraceEvent::Action::FreeCompleted, address, size, tag, false);
}

void record_oom(std::int64_t free_bytes, std::int64_t size) {
    History& h = instance();
    std::lock_guard lock(h.mutex);
    record(h, TraceEvent::Action::Oom, free_bytes, size, current_tag(), true);
}

MemorySnapshot snapshot(const allocator::CachingAllocatorModel* model) {
    constexpr std::int64_t kLargeBlock = 1 << 20;  // the CUDA allocator's large-pool boundary
    History& h = instance();
    std::lock_guard lock(h.mutex);
    MemorySnapshot snapshot;
    if (model) {
        snapshot.allocator_settings = model->settings();
        for (const allocator::SegmentView& view : model->segment_views()) {
            SnapshotSegment& segment = snapshot.segments.emplace_back();
            segment.address = view.address;
            segment.total_size = view.size;
            segment.stream = view.stream;
            segment.is_large = !view.small;
            segment.is_expandable = view.expandable;
            for (const allocator::SegmentView::Piece& piece : view.blocks) {
                SnapshotBlock& block = segment.blocks.emplace_back();
                block.size = piece.size;
                block.state = state_of(piece.allocated);
                if (const auto live = h.live.find(piece.address); live != h.live.end()) {
                    block.requested_size = live->second.size;
                    block.tag = live->second.tag;
                } else {
                    block.requested_size = piece.allocated ? piece.size : 0;
                }
            }
        }
    } else {
        for (const auto& [address, block] : h.live) {
            SnapshotSegment& segment = snapshot.segments.emplace_back();
            segment.address = address;
            segment.total_size = block.size;
            segment.is_large = block.size >= kLargeBlock;
            segment.blocks.push_back({block.size, block.size, state_of(true), block.tag});
        }
        std::sort(snapshot.segments.begin(), snapshot.segments.end(),
                  [](const auto& a, const auto& b) { return a.address < b.address; });
    }
    std::vector<TraceEvent>& trace = snapshot.device_traces.emplace_back();
    trace.reserve(h.events.size());
    for (const Recorded& recorded : h.events) {
        trace.push_back(recorded.event);
    }
    return snapshot;
}

}  // namespace history
}  // namespace oomlab::memory
