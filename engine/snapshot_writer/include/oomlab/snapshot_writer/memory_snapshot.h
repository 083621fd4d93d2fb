// A memory snapshot in the form pytorch.org/memory_viz reads: the allocator's segments and
// blocks at the end, and the trace of allocations and frees that led there. The CUDA caching
// allocator's history and the CPU tracking allocator's are both turned into this, then into
// the plain pickle PyTorch's torch.cuda.memory._dump_snapshot writes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "oomlab/allocator/allocator_settings.h"
#include "oomlab/snapshot_writer/allocation_tag.h"

namespace oomlab::memory {

struct TraceEvent {
    enum class Action {
        Alloc,
        FreeRequested,
        FreeCompleted,
        SegmentAlloc,
        SegmentFree,
        SegmentMap,
        SegmentUnmap,
        Snapshot,
        Oom,  // `address` holds the bytes the device had free
    };
    Action action = Action::Alloc;
    std::int64_t address = 0;
    std::int64_t size = 0;
    std::int64_t stream = 0;
    std::int64_t time_us = 0;
    AllocationTag tag = AllocationTag::Untagged;
};

struct SnapshotBlock {
    enum class State { ActiveAllocated, ActivePendingFree, Inactive };
    std::int64_t size = 0;
    std::int64_t requested_size = 0;
    State state = State::Inactive;
    AllocationTag tag = AllocationTag::Untagged;
};

// One contiguous reservation (a cudaMalloc; on the CPU, one heap block). Its blocks tile it
// in address order.
struct SnapshotSegment {
    std::int64_t device = 0;
    std::int64_t address = 0;
    std::int64_t total_size = 0;
    std::int64_t stream = 0;
    bool is_large = true;
    bool is_expandable = false;  // a mapped range of an expandable segment
    std::vector<SnapshotBlock> blocks;
};

struct MemorySnapshot {
    std::vector<SnapshotSegment> segments;
    std::vector<std::vector<TraceEvent>> device_traces;  // one list per device index
    // The caching allocator's settings, as PyTorch 2.x writes them ("allocator_settings"),
    // where they are known: the CPU's model (memory.alloc_conf).
    std::optional<allocator::AllocatorSettings> allocator_settings;
    // The settings of the run that recorded it, as JSON (key "oomlab_experiment"; readers of
    // PyTorch's snapshots pass over keys they do not know), so it can be run again.
    std::string experiment_json;
};

const char* action_name(TraceEvent::Action action);

// What a device's segments hold: reserved by the allocator, held by tensors, and the free
// blocks (no tensor, nothing pending) that a new allocation could reuse.
struct FreeBlocks {
    std::int64_t bytes = 0;
    std::int64_t largest = 0;
    std::int64_t count = 0;
};
struct SegmentUsage {
    std::int64_t reserved = 0;
    std::int64_t allocated = 0;
    FreeBlocks free;
};
SegmentUsage segment_usage(const std::vector<SnapshotSegment>& segments, std::int64_t device);
// The free blocks that could serve a request of `requested` bytes: those of its own pool only
// (the small pool's 2 MiB segments serve requests up to 1 MiB, the large pool's the rest).
FreeBlocks free_blocks_for(const std::vector<SnapshotSegment>& segments, std::int64_t device,
                           std::int64_t requested);

// The snapshot as a protocol-2 pickle of dicts and lists with PyTorch's key names.
std::string snapshot_pickle(const MemorySnapshot& snapshot);

// Writes the pickle to `path` through a temporary file, so a failed write leaves no partial
// snapshot. Throws Error naming the path.
void write_snapshot_file(const MemorySnapshot& snapshot, const std::filesystem::path& path);

// Whether `path` holds a snapshot this engine wrote (by its first bytes).
bool is_snapshot_file(const std::string& path);

// Checks debug.memory_snapshot before a run, as every output is checked (see
// oomlab/common/files.h): only a snapshot may be replaced, never one of `inputs`. Throws
// BadInput naming the key.
void check_snapshot_path(const std::string& path, const std::vector<std::string>& inputs);

}  // namespace oomlab::memory
