// The CPU tracking allocator's history (debug.memory_snapshot), kept while a snapshot is
// wanted: each allocation and free with its tag, the latest events only. Without the
// allocator model each heap block is its own segment; with it (memory.alloc_conf) the trace
// and the segments are the model's, as on a GPU.
#pragma once

#include <cstdint>
#include <vector>

#include "oomlab/allocator/caching_allocator_model.h"
#include "oomlab/snapshot_writer/memory_snapshot.h"

namespace oomlab::memory::history {

bool recording();

// Without the model: a block is a segment of its own, opened and released with it.
void record_block_allocation(std::int64_t address, std::int64_t size);
void record_block_free(std::int64_t address);

// With the model: what it reserved or released, then the block it handed out or took back.
void record_segment_changes(const std::vector<allocator::SegmentChange>& changes);
void record_allocation(std::int64_t address, std::int64_t size);
void record_free(std::int64_t address);

// `free_bytes`: what the device (the cap) still had when `size` bytes were refused.
void record_oom(std::int64_t free_bytes, std::int64_t size);

// The tensors alive now (in the model's segments, when there is one) and the trace so far.
MemorySnapshot snapshot(const allocator::CachingAllocatorModel* model);

}  // namespace oomlab::memory::history
