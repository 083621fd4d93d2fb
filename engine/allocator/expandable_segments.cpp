// Expandable segments in the model: finding the stream's segment, the pages a request maps
// (find_expandable_block and map_block), and the unmapped holes kept so that neither walks
// a segment's blocks.
#include <algorithm>
#include <vector>

#include "model_units.h"
#include "oomlab/allocator/caching_allocator_model.h"

namespace oomlab::allocator {

std::optional<int> CachingAllocatorModel::expandable_segment(std::int64_t stream,
                                                             bool small) const {
    if (const auto found = m_expandable.find({stream, small}); found != m_expandable.end()) {
        for (const int segment : found->second) {
            if (m_segments[std::size_t(segment)].end > 0) {
                return segment;
            }
        }
    }
    return std::nullopt;
}

// An expandable segment's unmapped ranges below its end, kept as its pages are mapped and
// released so that finding room never walks its blocks.
void CachingAllocatorModel::add_hole(Segment& segment, std::int64_t from, std::int64_t to) {
    auto next = segment.holes.lower_bound(from);
    if (next != segment.holes.begin() && std::prev(next)->second == from) {
        from = (--next)->first;
        next = segment.holes.erase(next);
    }
    if (next != segment.holes.end() && next->first == to) {
        to = next->second;
        segment.holes.erase(next);
    }
    segment.holes[from] = to;
}

void CachingAllocatorModel::fill_hole(Segment& segment, std::int64_t from, std::int64_t to) {
    auto hole = segment.holes.upper_bound(from);
    if (hole == segment.holes.begin() || std::prev(hole)->second <= from) {
        return;
    }
    --hole;
    const auto [start, stop] = *hole;
    segment.holes.erase(hole);
    if (start < from) {
        segment.holes[start] = from;
    }
    if (to < stop) {
        segment.holes[to] = stop;
    }
}

// find_expandable_block and map_block: the lowest unmapped range of the stream's expandable
// segments that, with the free block before it and what follows, has room; the pages mapped
// are its unmapped parts up to the request, each rounded up to whole pages.
std::int64_t CachingAllocatorModel::expandable_mapping(std::int64_t rounded, std::int64_t stream,
                                                       bool small) const {
    struct Piece {
        std::int64_t address = 0;
        std::int64_t size = 0;  // an unmapped range's; the last, past the end, is unbounded
        bool mapped = false;
        bool free = false;
    };
    constexpr std::int64_t kUnbounded = std::int64_t(1) << 62;
    const std::int64_t page = page_of(small);
    const auto expandable = m_expandable.find({stream, small});
    if (expandable == m_expandable.end()) {
        return round_up(rounded, page);  // a new segment
    }
    for (const int number : expandable->second) {
        const Segment& segment = m_segments[std::size_t(number)];
        // Past the last mapped block, the segment is unbounded.
        std::int64_t tail = segment.end;
        if (!segment.holes.empty() && segment.holes.rbegin()->second == segment.end) {
            tail = segment.holes.rbegin()->first;
        }
        const auto piece_at = [&](std::int64_t address) -> Piece {
            if (const auto hole = segment.holes.find(address);
                address != tail && hole != segment.holes.end()) {
                return {address, hole->second - address, false, true};
            }
            if (const auto block = m_blocks.find(address);
                address != tail && block != m_blocks.end() && block->second.segment == number) {
                return {address, block->second.size, true, !block->second.allocated};
            }
            return {address, kUnbounded, false, true};
        };
        const auto next = [&](const Piece& piece) {
            return piece.size == kUnbounded ? piece : piece_at(piece.address + piece.size);
        };
        std::vector<std::int64_t> gaps;
        for (const auto& [from, to] : segment.holes) {
            if (from < tail) {
                gaps.push_back(from);
            }
        }
        gaps.push_back(tail);
        for (const std::int64_t gap : gaps) {
            std::int64_t start = gap;
            if (auto after = m_blocks.lower_bound(gap); after != m_blocks.begin()) {
                const auto& [address, block] = *std::prev(after);
                if (block.segment == number && !block.allocated && address + block.size == gap) {
                    start = address;  // the free block right before it counts too
                }
            }
            std::int64_t available = 0;
            for (Piece piece = piece_at(start); piece.free && available < rounded;
                 piece = next(piece)) {
                available += std::min(piece.size, kUnbounded - available);
            }
            if (available < rounded) {
                continue;
            }
            std::int64_t remaining = rounded;
            std::int64_t mapped = 0;
            for (Piece piece = piece_at(start); remaining > 0; piece = next(piece)) {
                if (piece.mapped) {
                    remaining -= std::min(remaining, piece.size);
                } else {
                    const std::int64_t pages = round_up(std::min(remaining, piece.size), page);
                    mapped += pages;
                    remaining -= std::min(remaining, pages);
                }
            }
            return mapped;
        }
    }
    return round_up(rounded, page);  // a new segment
}

}  // namespace oomlab::allocator
