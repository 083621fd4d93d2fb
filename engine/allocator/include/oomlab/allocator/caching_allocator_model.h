// PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp, PyTorch 2.11) as a model
// that makes the same decisions for the same requests, without a GPU: requests rounded to 512
// bytes (or a power-of-two division), a small pool (requests up to 1 MiB, 2 MiB segments) and
// a large one (20 MiB segments up to 10 MiB, else rounded to 2 MiB), the best free block of the
// request's stream, splitting and merging, oversize blocks (max_split_size_mb), releasing cached
// segments and retrying before an out-of-memory error, garbage collection under a memory
// fraction, empty_cache, and expandable segments that grow by mapping pages.
//
// It runs either freely (allocate/free: it picks the addresses), or following a recorded trace
// (open_segment, place, ...: the addresses are the trace's, and the model is asked before each
// allocation what it would have done).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "oomlab/allocator/allocator_settings.h"

namespace oomlab::allocator {

inline constexpr std::int64_t kMinBlockSize = 512;
inline constexpr std::int64_t kSmallSize = 1 << 20;       // the small pool's requests
inline constexpr std::int64_t kSmallBuffer = 2 << 20;     // its segments
inline constexpr std::int64_t kLargeBuffer = 20 << 20;    // segments for 1 to 10 MiB
inline constexpr std::int64_t kMinLargeAlloc = 10 << 20;  // from here, own-size segments
inline constexpr std::int64_t kRoundLarge = 2 << 20;      // rounded to this
// The most the model holds at once (4 EiB): past it a damaged trace's sums would overflow.
inline constexpr std::int64_t kMostMemory = std::int64_t(1) << 62;
// The address range the model gives each segment it opens itself, so no two adjoin.
inline constexpr std::int64_t kVirtualRange = std::int64_t(1) << 40;

// What one allocation needs when no cached block serves it.
struct SegmentNeed {
    bool opens = false;      // a new segment (or, expandable, more pages mapped)
    std::int64_t bytes = 0;  // its size (the pages mapped)
};

struct ModelStats {
    std::int64_t reserved = 0;   // segments (mapped pages)
    std::int64_t allocated = 0;  // blocks handed out
    std::int64_t segments = 0;
    std::int64_t cached_free = 0;
    std::int64_t largest_free = 0;
    std::int64_t free_blocks = 0;
    std::int64_t retries = 0;  // cached segments released to retry an allocation
};

// A change of what the allocator reserves, as a trace's segment_* events record it.
struct SegmentChange {
    enum class Kind { Alloc, Free, Map, Unmap };
    Kind kind = Kind::Alloc;
    std::int64_t address = 0;
    std::int64_t size = 0;
    std::int64_t stream = 0;
};

// One contiguous reserved range and its blocks in address order (a snapshot's segment; an
// expandable segment gives one per mapped range).
struct SegmentView {
    struct Piece {
        std::int64_t address = 0;
        std::int64_t size = 0;
        bool allocated = false;
    };
    std::int64_t address = 0;
    std::int64_t size = 0;
    std::int64_t stream = 0;
    bool small = false;
    bool expandable = false;
    std::vector<Piece> blocks;
};

class CachingAllocatorModel {
public:
    // `capacity`: what the device (or the memory fraction) lets it reserve; 0 = no limit.
    explicit CachingAllocatorModel(AllocatorSettings settings, std::int64_t capacity = 0);

    std::int64_t round_size(std::int64_t size) const;
    static std::int64_t segment_size(std::int64_t rounded);  // get_allocation_size
    static bool is_small(std::int64_t rounded) { return rounded <= kSmallSize; }

    // Freely: the address handed out, or nullopt when even after releasing every cached
    // segment it does not fit (PyTorch's out-of-memory error).
    std::optional<std::int64_t> allocate(std::int64_t size, std::int64_t stream);
    void free(std::int64_t address);
    void empty_cache();  // torch.cuda.empty_cache()
    // The segments of `stream` are a private pool's still in use (a CUDA graph's, a MemPool's):
    // PyTorch never releases them to retry an allocation, to collect garbage or to empty the
    // cache, only when the pool is freed.
    void hold_cache_of(std::int64_t stream) { m_held_streams.insert(stream); }

    // Following a trace. `need` is asked before each allocation is placed.
    SegmentNeed need(std::int64_t size, std::int64_t stream) const;
    std::optional<std::int64_t> best_fit(std::int64_t size, std::int64_t stream) const;
    // A segment opened or pages mapped where the model already holds memory (a trace that
    // contradicts itself), or past what any figure can count (kMostMemory), are not followed:
    // false.
    bool open_segment(std::int64_t address, std::int64_t size, std::int64_t stream);
    // `small`: the pool whose request mapped them, when known (else told by their size).
    bool map_pages(std::int64_t address, std::int64_t size, std::int64_t stream,
                   std::optional<bool> small = std::nullopt);
    void release(std::int64_t address, std::int64_t size);  // segment_free or segment_unmap
    // Hands out the block at `address` as the allocator did (splitting off the rest when its
    // rules split); false when the model holds no free block there.
    bool place(std::int64_t address, std::int64_t size, std::int64_t stream);
    // A block allocated before a trace began, inside a segment the model knows.
    void mark_allocated(std::int64_t address, std::int64_t size);

    ModelStats stats() const;
    // With the free blocks (cached_free, largest_free, free_blocks) of the pool a request of
    // `size` is served from only: a small-pool block never serves a large request.
    ModelStats stats_for(std::int64_t size) const;
    std::vector<SegmentView> segment_views() const;
    // From now on, every segment opened or released is kept until taken.
    void keep_segment_changes(bool keep) { m_keep_changes = keep; }
    std::vector<SegmentChange> take_segment_changes() { return std::exchange(m_changes, {}); }
    std::int64_t reserved() const { return m_reserved; }
    std::int64_t allocated() const { return m_allocated; }
    std::int64_t capacity() const { return m_capacity; }
    const AllocatorSettings& settings() const { return m_settings; }

private:
    struct Block {
        std::int64_t size = 0;
        std::int64_t stream = 0;
        int segment = 0;
        bool small = false;
        bool allocated = false;
        std::int64_t freed_at = 0;  // the pool's search count when it was last freed (GC age)
    };
    struct Segment {
        std::int64_t stream = 0;
        bool small = false;
        bool expandable = false;
        std::int64_t base = 0;      // expandable: its virtual range starts here
        std::int64_t end = 0;       // and is mapped, with holes, up to here
        std::int64_t reserved = 0;  // its bytes held now (none: released or all unmapped)
        std::map<std::int64_t, std::int64_t> holes;  // expandable: unmapped [from, to) below end
    };
    // A pool's free blocks in sum, kept as they change so that statistics never walk blocks.
    struct FreeTally {
        std::int64_t bytes = 0;
        std::multiset<std::int64_t> sizes;
    };
    using Blocks = std::map<std::int64_t, Block>;                          // by address
    using FreeKey = std::tuple<std::int64_t, std::int64_t, std::int64_t>;  // stream, size, address

    std::optional<std::int64_t> find_free(std::int64_t rounded, std::int64_t stream,
                                          bool small) const;
    std::set<FreeKey>& pool(bool small) { return small ? m_small_free : m_large_free; }
    FreeTally& tally(bool small) { return small ? m_free_small : m_free_large; }
    const std::set<FreeKey>& pool(bool small) const { return small ? m_small_free : m_large_free; }
    void insert_free(Blocks::iterator block);
    void erase_free(Blocks::iterator block);
    Blocks::iterator merge(Blocks::iterator block);
    Blocks::iterator take(std::int64_t address, std::int64_t rounded);
    bool whole_segment(Blocks::const_iterator block) const;
    void release_block(Blocks::iterator block);
    std::optional<Block> cut_free(std::int64_t address, std::int64_t size);
    // Whether [address, address + size) is memory the model does not hold yet (and not empty),
    // and holding it too keeps what the model holds within kMostMemory.
    bool is_new_memory(std::int64_t address, std::int64_t size) const;
    void claim(std::int64_t address, std::int64_t size);
    // alloc_block, freely: the free block that serves the request.
    std::optional<std::int64_t> open(std::int64_t rounded, std::int64_t stream);
    bool release_oversize(std::int64_t rounded, std::int64_t stream);
    void release_all_cached();
    void collect_garbage();
    // Free blocks of one pool (`small`), or of both.
    ModelStats pool_stats(std::optional<bool> small) const;
    // Opens an entry for a segment (indexed by stream and pool when expandable; one mapped from
    // `base`): its number.
    int add_segment(std::int64_t stream, bool small, bool expandable, std::int64_t base);
    static void add_hole(Segment& segment, std::int64_t from, std::int64_t to);
    static void fill_hole(Segment& segment, std::int64_t from, std::int64_t to);
    void count_reserved(int segment, std::int64_t bytes);  // bytes held (or, negative, released)
    void note_change(SegmentChange::Kind kind, std::int64_t address, std::int64_t size,
                     std::int64_t stream);
    std::optional<int> expandable_segment(std::int64_t stream, bool small) const;
    std::int64_t expandable_mapping(std::int64_t rounded, std::int64_t stream, bool small) const;

    AllocatorSettings m_settings;
    std::int64_t m_capacity = 0;
    std::int64_t m_reserved = 0;
    std::int64_t m_allocated = 0;
    Blocks m_blocks;
    std::set<FreeKey> m_small_free;
    std::set<FreeKey> m_large_free;
    std::vector<Segment> m_segments;
    std::int64_t m_segments_held = 0;  // of m_segments, those holding bytes now
    FreeTally m_free_large;
    FreeTally m_free_small;
    // The expandable segments of each stream and pool, in the order they were opened.
    std::map<std::pair<std::int64_t, bool>, std::vector<int>> m_expandable;
    std::int64_t m_next_address = std::int64_t(1) << 40;  // freely chosen segments start here
    std::int64_t m_searches = 0;                          // get_free_block calls, the GC's clock
    std::int64_t m_retries = 0;
    bool m_keep_changes = false;
    std::set<std::int64_t> m_held_streams;  // hold_cache_of
    std::vector<SegmentChange> m_changes;
};

}  // namespace oomlab::allocator
