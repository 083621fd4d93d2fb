#include "oomlab/allocator/caching_allocator_model.h"

#include <algorithm>
#include <iterator>

#include "model_units.h"

namespace oomlab::allocator {
namespace {

int log2_floor(std::uint64_t value) {
    int log = -1;
    for (; value > 0; value >>= 1) {
        ++log;
    }
    return log;
}

// roundup_power2_next_division: the next of `divisions` equal steps between two powers of 2.
std::int64_t next_division(std::int64_t size, int divisions) {
    const auto unsigned_size = static_cast<std::uint64_t>(size);
    if ((unsigned_size & (unsigned_size - 1)) == 0) {
        return size;
    }
    const std::int64_t floor = std::int64_t(1) << log2_floor(unsigned_size);
    const std::int64_t step = floor >> log2_floor(static_cast<std::uint64_t>(divisions));
    if (step == 0) {
        return floor << 1;
    }
    const std::int64_t rounded_down = size & ~(step - 1);
    return rounded_down == size ? size : rounded_down + step;
}

}  // namespace

CachingAllocatorModel::CachingAllocatorModel(AllocatorSettings settings, std::int64_t capacity)
    : m_settings(settings), m_capacity(capacity) {}

std::int64_t CachingAllocatorModel::round_size(std::int64_t size) const {
    if (size <= kMinBlockSize) {
        return kMinBlockSize;
    }
    // The interval of sizes [2^i, 2^(i+1)) MiB, the first from 0 and the last open-ended.
    const int interval = std::clamp(log2_floor(static_cast<std::uint64_t>(size) >> 20), 0,
                                    int(m_settings.roundup_power2_divisions.size()) - 1);
    const int divisions = m_settings.roundup_power2_divisions[std::size_t(interval)];
    if (divisions > 1 && size > kMinBlockSize * divisions) {
        return next_division(size, divisions);
    }
    return round_up(size, kMinBlockSize);
}

std::int64_t CachingAllocatorModel::segment_size(std::int64_t rounded) {
    if (rounded <= kSmallSize) {
        return kSmallBuffer;
    }
    return rounded < kMinLargeAlloc ? kLargeBuffer : round_up(rounded, kRoundLarge);
}

// get_free_block: the smallest free block of the stream at least this large, unless the
// oversize rules turn it down.
std::optional<std::int64_t> CachingAllocatorModel::find_free(std::int64_t rounded,
                                                             std::int64_t stream,
                                                             bool small) const {
    const std::set<FreeKey>& blocks = pool(small);
    const auto found = blocks.lower_bound({stream, rounded, 0});
    if (found == blocks.end() || std::get<0>(*found) != stream) {
        return std::nullopt;
    }
    const std::int64_t size = std::get<1>(*found);
    const std::int64_t max_split = m_settings.max_split_size;
    if (rounded < max_split && size >= max_split) {
        return std::nullopt;  // no oversize block for a request that could split one
    }
    if (rounded >= max_split && size >= rounded + kLargeBuffer) {
        return std::nullopt;  // an oversize block, but too much larger than asked
    }
    return std::get<2>(*found);
}

std::optional<std::int64_t> CachingAllocatorModel::best_fit(std::int64_t size,
                                                            std::int64_t stream) const {
    const std::int64_t rounded = round_size(size);
    return find_free(rounded, stream, is_small(rounded));
}

int CachingAllocatorModel::add_segment(std::int64_t stream, bool small, bool expandable,
                                       std::int64_t base) {
    const int number = int(m_segments.size());
    Segment& segment = m_segments.emplace_back();
    segment.stream = stream;
    segment.small = small;
    segment.expandable = expandable;
    segment.base = segment.end = base;
    if (expandable) {
        m_expandable[{stream, small}].push_back(number);
    }
    return number;
}

void CachingAllocatorModel::count_reserved(int segment, std::int64_t bytes) {
    std::int64_t& held = m_segments[std::size_t(segment)].reserved;
    m_segments_held += (held == 0 && bytes > 0) - (held > 0 && held + bytes == 0);
    held += bytes;
    m_reserved += bytes;
}

SegmentNeed CachingAllocatorModel::need(std::int64_t size, std::int64_t stream) const {
    const std::int64_t rounded = round_size(size);
    const bool small = is_small(rounded);
    if (find_free(rounded, stream, small)) {
        return {};
    }
    if (!m_settings.expandable_segments) {
        return {true, segment_size(rounded)};
    }
    return {true, expandable_mapping(rounded, stream, small)};
}

void CachingAllocatorModel::insert_free(Blocks::iterator block) {
    block->second.freed_at = m_searches;
    pool(block->second.small).insert({block->second.stream, block->second.size, block->first});
    FreeTally& free = tally(block->second.small);
    free.bytes += block->second.size;
    free.sizes.insert(block->second.size);
}

void CachingAllocatorModel::erase_free(Blocks::iterator block) {
    if (pool(block->second.small).erase({block->second.stream, block->second.size, block->first})) {
        FreeTally& free = tally(block->second.small);
        free.bytes -= block->second.size;
        free.sizes.erase(free.sizes.find(block->second.size));
    }
}

// free_block's merging: with the free neighbours of the same segment, then into the pool.
CachingAllocatorModel::Blocks::iterator CachingAllocatorModel::merge(Blocks::iterator block) {
    const auto joins = [&](Blocks::iterator a, Blocks::iterator b) {
        return a->second.segment == b->second.segment && !a->second.allocated &&
               !b->second.allocated && a->first + a->second.size == b->first;
    };
    if (auto next = std::next(block); next != m_blocks.end() && joins(block, next)) {
        erase_free(next);
        block->second.size += next->second.size;
        m_blocks.erase(next);
    }
    if (block != m_blocks.begin()) {
        if (auto previous = std::prev(block); joins(previous, block)) {
            erase_free(previous);
            previous->second.size += block->second.size;
            m_blocks.erase(block);
            block = previous;
        }
    }
    insert_free(block);
    return block;
}

bool CachingAllocatorModel::whole_segment(Blocks::const_iterator block) const {
    const int segment = block->second.segment;
    const bool first = block == m_blocks.begin() || std::prev(block)->second.segment != segment;
    const auto next = std::next(block);
    return first && (next == m_blocks.end() || next->second.segment != segment);
}

// Hands out `rounded` bytes at the start of the free block at `address` (alloc_found_block).
CachingAllocatorModel::Blocks::iterator CachingAllocatorModel::take(std::int64_t address,
                                                                    std::int64_t rounded) {
    auto block = m_blocks.find(address);
    erase_free(block);
    Block& taken = block->second;
    const std::int64_t remaining = taken.size - rounded;
    const bool split = taken.small || m_segments[std::size_t(taken.segment)].expandable
                           ? remaining >= kMinBlockSize
                           : rounded < m_settings.max_split_size && remaining > kSmallSize;
    if (split) {
        Block rest = taken;
        rest.size = remaining;
        taken.size = rounded;
        insert_free(m_blocks.emplace(address + rounded, rest).first);
    }
    taken.allocated = true;
    m_allocated += taken.size;
    return block;
}

void CachingAllocatorModel::note_change(SegmentChange::Kind kind, std::int64_t address,
                                        std::int64_t size, std::int64_t stream) {
    if (m_keep_changes) {
        m_changes.push_back({kind, address, size, stream});
    }
}

void CachingAllocatorModel::release_block(Blocks::iterator block) {
    note_change(SegmentChange::Kind::Free, block->first, block->second.size, block->second.stream);
    erase_free(block);
    count_reserved(block->second.segment, -block->second.size);
    if (Segment& segment = m_segments[std::size_t(block->second.segment)]; segment.expandable) {
        add_hole(segment, block->first, block->first + block->second.size);
    }
    m_blocks.erase(block);
}

std::optional<std::int64_t> CachingAllocatorModel::open(std::int64_t rounded, std::int64_t stream) {
    const bool small = is_small(rounded);
    const SegmentNeed needed = need(rounded, stream);
    if (m_capacity > 0 && m_reserved + needed.bytes > m_capacity) {
        return std::nullopt;
    }
    // Where the model's own addresses or what it holds would pass what any figure counts (a
    // damaged trace's sizes: thousands of pebibytes), the request is refused as one the
    // device cannot hold.
    if (m_settings.expandable_segments) {
        auto segment = expandable_segment(stream, small);
        if (!segment) {
            if (!is_new_memory(m_next_address, kVirtualRange)) {
                return std::nullopt;
            }
            segment = add_segment(stream, small, true, m_next_address);
            m_next_address += kVirtualRange;  // a virtual range of its own
        }
        const std::int64_t end = m_segments[std::size_t(*segment)].end;
        if (!map_pages(end, needed.bytes, stream)) {
            return std::nullopt;
        }
        // The pages join the free block before them: the block the request takes.
        return std::prev(m_blocks.upper_bound(end))->first;
    }
    // alloc_block hands the new segment to the request as it is, whatever get_free_block's
    // oversize rules would say of it. Opening it moves the next address a virtual range past
    // it (claim), so no two segments adjoin.
    const std::int64_t address = m_next_address;
    if (!open_segment(address, needed.bytes, stream)) {
        return std::nullopt;
    }
    return address;
}

// release_available_cached_blocks: with max_split_size_mb, frees oversize cached segments,
// the smallest large enough or else the largest until enough.
bool CachingAllocatorModel::release_oversize(std::int64_t rounded, std::int64_t stream) {
    if (m_settings.max_split_size == AllocatorSettings::kNoMaxSplit) {
        return false;
    }
    std::set<FreeKey>& blocks = pool(is_small(rounded));
    const std::int64_t wanted = std::max(rounded, m_settings.max_split_size);
    auto found = blocks.lower_bound({stream, wanted, 0});
    const auto release_at = [&](std::set<FreeKey>::iterator key) {
        auto block = m_blocks.find(std::get<2>(*key));
        if (whole_segment(block)) {
            release_block(block);
        }
    };
    if (found != blocks.end() && std::get<0>(*found) == stream) {
        release_at(found);
        return true;
    }
    // No single one: the largest of the stream's oversize blocks, until enough (PyTorch
    // releases them even when they are not enough).
    std::vector<std::int64_t> largest;
    std::int64_t released = 0;
    for (auto key = found; key != blocks.begin() && released < wanted;) {
        --key;
        if (std::get<0>(*key) != stream || std::get<1>(*key) < m_settings.max_split_size) {
            break;
        }
        largest.push_back(std::get<2>(*key));
        released += std::get<1>(*key);
    }
    for (const std::int64_t address : largest) {
        const auto block = m_blocks.find(address);
        if (whole_segment(block)) {
            release_block(block);
        }
    }
    return released >= wanted;
}

void CachingAllocatorModel::release_all_cached() {
    std::vector<std::int64_t> whole;
    std::vector<std::int64_t> expandable;
    for (const auto& key : m_small_free) {
        whole.push_back(std::get<2>(key));
    }
    for (const auto& key : m_large_free) {
        whole.push_back(std::get<2>(key));
    }
    for (const std::int64_t address : whole) {
        const auto block = m_blocks.find(address);
        if (m_held_streams.count(block->second.stream)) {
            continue;
        }
        if (m_segments[std::size_t(block->second.segment)].expandable) {
            expandable.push_back(address);
        } else if (whole_segment(block)) {
            release_block(block);
        }
    }
    // Expandable segments unmap the whole pages inside each free block.
    for (const std::int64_t address : expandable) {
        const auto block = m_blocks.find(address);
        const std::int64_t page = page_of(block->second.small);
        const std::int64_t first = round_up(address, page);
        const std::int64_t last = (address + block->second.size) / page * page;
        if (last > first) {
            release(first, last - first);
        }
    }
}

// garbage_collect_cached_blocks: under a memory fraction, once reserved passes the threshold,
// frees cached whole segments of the large pool not reused for longer than the average.
void CachingAllocatorModel::collect_garbage() {
    const auto threshold =
        static_cast<std::int64_t>(m_settings.garbage_collection_threshold * double(m_capacity));
    if (m_capacity == 0 || m_settings.garbage_collection_threshold <= 0 ||
        m_reserved <= threshold) {
        return;
    }
    const std::int64_t target = m_reserved - threshold;
    std::vector<std::int64_t> candidates;
    double total_age = 0;
    for (const auto& key : m_large_free) {
        const auto block = m_blocks.find(std::get<2>(key));
        if (whole_segment(block) && !m_segments[std::size_t(block->second.segment)].expandable &&
            !m_held_streams.count(block->second.stream)) {
            candidates.push_back(block->first);
            total_age += double(m_searches - block->second.freed_at);
        }
    }
    std::int64_t reclaimed = 0;
    bool freed = true;
    while (reclaimed < target && freed && !candidates.empty()) {
        const double threshold_age = total_age / double(candidates.size());
        freed = false;
        for (auto it = candidates.begin(); it != candidates.end();) {
            const auto block = m_blocks.find(*it);
            const double age = double(m_searches - block->second.freed_at);
            if (age >= threshold_age) {
                freed = true;
                reclaimed += block->second.size;
                total_age -= age;
                release_block(block);
                it = candidates.erase(it);
            } else {
                ++it;
            }
        }
    }
}

std::optional<std::int64_t> CachingAllocatorModel::allocate(std::int64_t size,
                                                            std::int64_t stream) {
    // No device holds a pebibyte; a damaged trace's size would overflow the rounding.
    constexpr std::int64_t kLargestRequest = std::int64_t{1} << 50;
    if (size > kLargestRequest) {
        return std::nullopt;
    }
    const std::int64_t rounded = round_size(size);
    const bool small = is_small(rounded);
    ++m_searches;
    std::optional<std::int64_t> address = find_free(rounded, stream, small);
    if (!address) {
        if (m_capacity > 0 && m_settings.garbage_collection_threshold > 0) {
            collect_garbage();
        }
        address = open(rounded, stream);
        if (!address && release_oversize(rounded, stream)) {
            address = open(rounded, stream);
        }
        if (!address) {
            release_all_cached();
            ++m_retries;
            address = open(rounded, stream);
        }
        if (!address) {
            return std::nullopt;
        }
    }
    return take(*address, rounded)->first;
}

void CachingAllocatorModel::free(std::int64_t address) {
    const auto block = m_blocks.find(address);
    if (block == m_blocks.end() || !block->second.allocated) {
        return;
    }
    block->second.allocated = false;
    m_allocated -= block->second.size;
    merge(block);
}

void CachingAllocatorModel::empty_cache() {
    release_all_cached();
}

ModelStats CachingAllocatorModel::stats() const {
    return pool_stats(std::nullopt);
}

ModelStats CachingAllocatorModel::stats_for(std::int64_t size) const {
    return pool_stats(is_small(round_size(size)));
}

ModelStats CachingAllocatorModel::pool_stats(std::optional<bool> small) const {
    ModelStats stats;
    stats.reserved = m_reserved;
    stats.allocated = m_allocated;
    for (const bool pool_small : {false, true}) {
        const FreeTally& free = pool_small ? m_free_small : m_free_large;
        if ((!small || *small == pool_small) && !free.sizes.empty()) {
            stats.cached_free += free.bytes;
            stats.largest_free = std::max(stats.largest_free, *free.sizes.rbegin());
            stats.free_blocks += std::int64_t(free.sizes.size());
        }
    }
    stats.segments = m_segments_held;
    stats.retries = m_retries;  // PyTorch's num_alloc_retries
    return stats;
}

std::vector<SegmentView> CachingAllocatorModel::segment_views() const {
    std::vector<SegmentView> views;
    int segment = -1;
    for (const auto& [address, block] : m_blocks) {
        if (views.empty() || block.segment != segment ||
            views.back().address + views.back().size != address) {
            const bool expandable = m_segments[std::size_t(block.segment)].expandable;
            views.push_back({address, 0, block.stream, block.small, expandable, {}});
            segment = block.segment;
        }
        views.back().size += block.size;
        views.back().blocks.push_back({address, block.size, block.allocated});
    }
    return views;
}

}  // namespace oomlab::allocator
