// Whether an out-of-memory was for want of memory or of a block large enough: the
// allocator's free space when the allocation failed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace oomlab {

// The allocator's free space when an allocation failed: whether the memory was there but in
// pieces too small for the request. Only where the allocator keeps blocks (CUDA, and the
// CPU's model). The free blocks are those of the pool that serves the request (the small
// pool's up to 1 MiB, the large pool's beyond): the other pool's never could.
struct Fragmentation {
    std::int64_t requested_bytes = 0;
    std::int64_t reserved_free_bytes = 0;  // reserved by the allocator, held by no tensor
    std::int64_t largest_free_block = 0;
    std::int64_t free_blocks = 0;
    std::int64_t unreserved_free_bytes = 0;  // what the cap or the device still allows

    // What a new segment for the request reserves with the allocator's default sizes: 2 MiB
    // up to 1 MiB, 20 MiB up to 10 MiB, the request rounded up to 2 MiB beyond.
    std::int64_t segment_bytes() const;
    const char* pool() const;  // "small" or "large": the pool that serves the request
    // No single free block holds the request and no new segment fits beside them, but the
    // pieces are what is missing: together they would hold it, or handed back they would make
    // room for its segment. Room left that is smaller than the segment the request needs (a
    // 2.4 MiB request's 20 MiB under a 16 MiB cap) is want of memory, not pieces.
    bool fragmented() const {
        return largest_free_block < requested_bytes && unreserved_free_bytes < segment_bytes() &&
               (reserved_free_bytes >= requested_bytes ||
                reserved_free_bytes + unreserved_free_bytes >= segment_bytes());
    }
};

// What the failed allocation asked for, read from the error's "Tried to allocate 20.00 MiB"
// (the CUDA caching allocator's words, and the tracking CPU allocator's).
std::optional<std::int64_t> requested_bytes_in(std::string_view oom_message);

// One sentence for the OOM's message: fragmented (and what helps) or plainly too little.
// `alloc_conf` is the run's memory.alloc_conf: a setting already on is not advised.
std::string describe_fragmentation(const Fragmentation& free_space, std::string_view alloc_conf);

}  // namespace oomlab
