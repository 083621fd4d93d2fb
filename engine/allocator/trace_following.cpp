// The model following a recorded trace: segments opened, pages mapped and released, and blocks
// handed out where the trace says the allocator put them.
#include <algorithm>
#include <limits>

#include "oomlab/allocator/caching_allocator_model.h"

namespace oomlab::allocator {
namespace {

// A damaged trace's sizes can be empty, negative or run past the last address.
bool is_range(std::int64_t address, std::int64_t size) {
    return size > 0 && address <= std::numeric_limits<std::int64_t>::max() - size;
}

}  // namespace

bool CachingAllocatorModel::is_new_memory(std::int64_t address, std::int64_t size) const {
    if (!is_range(address, size) || size > kMostMemory - m_reserved) {
        return false;
    }
    const auto after = m_blocks.lower_bound(address);
    if (after != m_blocks.end() && after->first < address + size) {
        return false;
    }
    return after == m_blocks.begin() ||
           std::prev(after)->first + std::prev(after)->second.size <= address;
}

// Segments the model opens itself start past every one a trace opened.
void CachingAllocatorModel::claim(std::int64_t address, std::int64_t size) {
    if (address + size < std::numeric_limits<std::int64_t>::max() - 2 * kVirtualRange) {
        m_next_address = std::max(m_next_address, address + size + kVirtualRange);
    }
}

bool CachingAllocatorModel::open_segment(std::int64_t address, std::int64_t size,
                                         std::int64_t stream) {
    if (!is_new_memory(address, size)) {
        return false;
    }
    claim(address, size);
    const bool small = size == kSmallBuffer;  // large-pool segments are 10 MiB or more
    Block block{size, stream, add_segment(stream, small, false, 0), small};
    count_reserved(block.segment, size);
    note_change(SegmentChange::Kind::Alloc, address, size, stream);
    insert_free(m_blocks.emplace(address, block).first);
    return true;
}

bool CachingAllocatorModel::map_pages(std::int64_t address, std::int64_t size, std::int64_t stream,
                                      std::optional<bool> small) {
    // Pages land in a hole or at the end of the stream's segment of that pool (the one whose
    // range starts nearest below them: a segment reserves a whole device's addresses, mapped
    // or not); a segment's first pages start it. A small pool maps 2 MiB pages, a large one
    // 20 MiB.
    if (!is_new_memory(address, size)) {
        return false;
    }
    claim(address, size);
    const bool in_small = small.value_or(size % kLargeBuffer != 0);
    std::optional<int> segment;
    if (const auto pool = m_expandable.find({stream, in_small}); pool != m_expandable.end()) {
        for (const int candidate : pool->second) {
            const Segment& held = m_segments[std::size_t(candidate)];
            if (held.base <= address &&
                (!segment || held.base > m_segments[std::size_t(*segment)].base)) {
                segment = candidate;
            }
        }
    }
    if (!segment) {
        segment = add_segment(stream, in_small, true, address);
    }
    Segment& grown = m_segments[std::size_t(*segment)];
    if (address > grown.end) {
        add_hole(grown, grown.end, address);
    }
    fill_hole(grown, address, std::min(address + size, grown.end));
    grown.end = std::max(grown.end, address + size);
    count_reserved(*segment, size);
    note_change(SegmentChange::Kind::Map, address, size, stream);
    Block block{size, stream, *segment, grown.small};
    merge(m_blocks.emplace(address, block).first);
    return true;
}

// The free block holding [address, address + size) loses that range; what is left of it on
// either side stays free. The block as it was, or nullopt when no free block holds the range.
std::optional<CachingAllocatorModel::Block> CachingAllocatorModel::cut_free(std::int64_t address,
                                                                            std::int64_t size) {
    if (!is_range(address, size)) {
        return std::nullopt;
    }
    auto block = m_blocks.upper_bound(address);
    if (block == m_blocks.begin()) {
        return std::nullopt;
    }
    --block;
    const std::int64_t start = block->first;
    const Block held = block->second;
    if (held.allocated || start + held.size < address + size) {
        return std::nullopt;
    }
    erase_free(block);
    m_blocks.erase(block);
    if (address > start) {
        Block before = held;
        before.size = address - start;
        insert_free(m_blocks.emplace(start, before).first);
    }
    if (const std::int64_t after = start + held.size - (address + size); after > 0) {
        Block rest = held;
        rest.size = after;
        insert_free(m_blocks.emplace(address + size, rest).first);
    }
    return held;
}

void CachingAllocatorModel::release(std::int64_t address, std::int64_t size) {
    // Else the model holds it otherwise: nothing to release.
    if (const std::optional<Block> held = cut_free(address, size)) {
        count_reserved(held->segment, -size);
        Segment& segment = m_segments[std::size_t(held->segment)];
        const bool expandable = segment.expandable;
        if (expandable) {
            add_hole(segment, address, address + size);
        }
        note_change(expandable ? SegmentChange::Kind::Unmap : SegmentChange::Kind::Free, address,
                    size, held->stream);
    }
}

bool CachingAllocatorModel::place(std::int64_t address, std::int64_t size, std::int64_t stream) {
    auto block = m_blocks.upper_bound(address);
    if (block == m_blocks.begin()) {
        return false;
    }
    --block;
    if (block->second.allocated || block->second.stream != stream ||
        block->first + block->second.size <= address) {
        return false;
    }
    const std::int64_t rounded = round_size(size);
    if (block->first < address) {  // the model's block starts earlier: keep the front free
        erase_free(block);
        Block rest = block->second;
        rest.size = block->first + block->second.size - address;
        block->second.size = address - block->first;
        insert_free(block);
        block = m_blocks.emplace(address, rest).first;
        insert_free(block);
    }
    if (block->second.size < rounded) {
        return false;
    }
    ++m_searches;
    take(address, rounded);
    return true;
}

void CachingAllocatorModel::mark_allocated(std::int64_t address, std::int64_t size) {
    if (std::optional<Block> held = cut_free(address, size)) {
        held->size = size;
        held->allocated = true;
        m_allocated += size;
        m_blocks.emplace(address, *held);
    }
}

}  // namespace oomlab::allocator
