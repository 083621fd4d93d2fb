// Each rule of the caching allocator, pinned by a sequence worked out by hand from PyTorch
// 2.11's c10/cuda/CUDACachingAllocator.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "oomlab/allocator/caching_allocator_model.h"
#include "test_support.h"

namespace oomlab::allocator {
namespace {

using test::kMiB;

CachingAllocatorModel model_with(const char* conf, std::int64_t capacity = 0) {
    return CachingAllocatorModel(parse_alloc_conf(conf), capacity);
}

TEST(AllocatorModel, RoundsTo512BytesOrAPowerOfTwoDivision) {
    const CachingAllocatorModel plain = model_with("");
    EXPECT_EQ(plain.round_size(1), 512);
    EXPECT_EQ(plain.round_size(513), 1024);
    EXPECT_EQ(plain.round_size(40960000), 40960000);  // already a multiple of 512
    // 1.2 MiB lies in [1, 2) MiB; 4 divisions of it are 256 KiB steps: up to 1.25 MiB.
    const CachingAllocatorModel divided = model_with("roundup_power2_divisions:4");
    EXPECT_EQ(divided.round_size(1258291), 1310720);
    EXPECT_EQ(divided.round_size(2 * kMiB), 2 * kMiB);  // a power of 2 stays
    EXPECT_EQ(divided.round_size(1500), 1536);          // under 512 x 4: plain rounding
}

TEST(AllocatorModel, SegmentSizesFollowThePools) {
    EXPECT_EQ(CachingAllocatorModel::segment_size(kMiB), 2 * kMiB);         // small pool
    EXPECT_EQ(CachingAllocatorModel::segment_size(kMiB + 512), 20 * kMiB);  // 1 to 10 MiB
    EXPECT_EQ(CachingAllocatorModel::segment_size(40960000), 40 * kMiB);    // 39.06 MiB
    EXPECT_EQ(CachingAllocatorModel::segment_size(10 * kMiB), 10 * kMiB);
}

TEST(AllocatorModel, ALargeBlockSplitsAndItsRestServesTheNextRequest) {
    CachingAllocatorModel model = model_with("");
    const auto first = model.allocate(3 * kMiB, 0);
    ASSERT_TRUE(first);
    EXPECT_EQ(model.reserved(), 20 * kMiB);       // one 20 MiB segment
    EXPECT_FALSE(model.need(4 * kMiB, 0).opens);  // the 17 MiB left serves 4 MiB
    const auto second = model.allocate(4 * kMiB, 0);
    ASSERT_TRUE(second);
    EXPECT_EQ(*second, *first + 3 * kMiB);
    EXPECT_EQ(model.reserved(), 20 * kMiB);
    EXPECT_EQ(model.allocated(), 7 * kMiB);
    // Another stream does not take this stream's blocks.
    EXPECT_TRUE(model.need(kMiB * 2, 7).opens);
}

TEST(AllocatorModel, ALargeBlockWithAMegabyteOrLessLeftIsNotSplit) {
    CachingAllocatorModel model = model_with("");
    ASSERT_TRUE(model.allocate(20 * kMiB - kMiB / 2, 0));
    EXPECT_EQ(model.allocated(), 20 * kMiB);  // the 0.5 MiB stays with the block
}

TEST(AllocatorModel, FreedNeighboursMergeIntoOneBlock) {
    CachingAllocatorModel model = model_with("");
    const auto a = model.allocate(3 * kMiB, 0);
    const auto b = model.allocate(4 * kMiB, 0);
    model.free(*a);
    EXPECT_EQ(model.stats().largest_free, 13 * kMiB);  // the rest after b
    model.free(*b);
    EXPECT_EQ(model.stats().largest_free, 20 * kMiB);
    EXPECT_EQ(model.stats().cached_free, 20 * kMiB);
    EXPECT_EQ(model.allocated(), 0);
}

// What could have served a request is its own pool's free blocks: 1.5 MiB free in the small
// pool's segments is no help to a 3 MiB request, nor 17 MiB in the large pool's to 4 KiB.
TEST(AllocatorModel, TheFreeSpaceForARequestIsItsOwnPoolsOnly) {
    CachingAllocatorModel model = model_with("");
    const auto small = model.allocate(kMiB / 2, 0);
    ASSERT_TRUE(small);
    ASSERT_TRUE(model.allocate(3 * kMiB, 0));
    EXPECT_EQ(model.stats().cached_free, 3 * kMiB / 2 + 17 * kMiB);  // both pools
    const ModelStats large = model.stats_for(3 * kMiB);
    EXPECT_EQ(large.cached_free, 17 * kMiB);
    EXPECT_EQ(large.largest_free, 17 * kMiB);
    EXPECT_EQ(large.free_blocks, 1);
    const ModelStats tiny = model.stats_for(4096);
    EXPECT_EQ(tiny.cached_free, 3 * kMiB / 2);
    EXPECT_EQ(tiny.free_blocks, 1);
    EXPECT_EQ(model.stats_for(kMiB).cached_free, 3 * kMiB / 2);  // 1 MiB is still small
    EXPECT_EQ(large.reserved, 22 * kMiB);  // what is reserved and allocated is the whole's
    EXPECT_EQ(large.allocated, kMiB / 2 + 3 * kMiB);
}

TEST(AllocatorModel, OversizeBlocksServeOnlyRequestsCloseToThemUnderMaxSplitSize) {
    CachingAllocatorModel model = model_with("max_split_size_mb:64");
    model.free(*model.allocate(100 * kMiB, 0));
    EXPECT_TRUE(model.need(30 * kMiB, 0).opens);   // never split for a small request
    EXPECT_TRUE(model.need(70 * kMiB, 0).opens);   // 100 >= 70 + 20: too much larger
    EXPECT_FALSE(model.need(90 * kMiB, 0).opens);  // within 20 MiB: served whole
    ASSERT_TRUE(model.allocate(90 * kMiB, 0));
    EXPECT_EQ(model.allocated(), 100 * kMiB);
}

TEST(AllocatorModel, AnExpandableSegmentGrowsByPagesFromItsFreeEnd) {
    CachingAllocatorModel model = model_with("expandable_segments:True");
    ASSERT_TRUE(model.allocate(3 * kMiB, 0));
    EXPECT_EQ(model.reserved(), 20 * kMiB);  // one 20 MiB page of the large pool
    // 30 MiB: the 17 MiB free at the end and 13 MiB more, mapped as one page.
    EXPECT_EQ(model.need(30 * kMiB, 0).bytes, 20 * kMiB);
    ASSERT_TRUE(model.allocate(30 * kMiB, 0));
    EXPECT_EQ(model.reserved(), 40 * kMiB);
    EXPECT_EQ(model.stats().segments, 1);
}

TEST(AllocatorModel, CachedSegmentsAreReleasedAndTheRequestRetriedBeforeAnOom) {
    CachingAllocatorModel model = model_with("", 40 * kMiB);
    model.free(*model.allocate(30 * kMiB, 0));
    EXPECT_EQ(model.reserved(), 30 * kMiB);
    // 36 MiB fits no cached block; 30 + 36 passes 40, so the 30 are released first.
    ASSERT_TRUE(model.allocate(36 * kMiB, 0));
    EXPECT_EQ(model.reserved(), 36 * kMiB);
    EXPECT_FALSE(model.allocate(10 * kMiB, 0));  // 46 MiB: out of memory
    EXPECT_EQ(model.reserved(), 36 * kMiB);
}

TEST(AllocatorModel, EmptyCacheReleasesOnlyWholeFreeSegments) {
    CachingAllocatorModel model = model_with("");
    const auto a = model.allocate(3 * kMiB, 0);
    model.free(*model.allocate(12 * kMiB, 0));  // a 12 MiB segment of its own
    ASSERT_TRUE(a);
    model.empty_cache();
    EXPECT_EQ(model.reserved(), 20 * kMiB);  // the split one stays
    model.free(*a);
    model.empty_cache();
    EXPECT_EQ(model.reserved(), 0);
}

// A private pool still held (a CUDA graph's, a MemPool's; here its own stream) keeps its cached
// segments: neither a retry under the cap nor empty_cache releases them.
TEST(AllocatorModel, AHeldPoolsSegmentsAreNeverReleased) {
    constexpr std::int64_t kPool = -1;
    CachingAllocatorModel model = model_with("", 30 * kMiB);
    model.hold_cache_of(kPool);
    model.free(*model.allocate(6 * kMiB, kPool));
    EXPECT_EQ(model.reserved(), 20 * kMiB);
    EXPECT_FALSE(model.allocate(8 * kMiB, 0));  // 20 + 20 passes 30, and the pool's stays
    model.empty_cache();
    EXPECT_EQ(model.reserved(), 20 * kMiB);
    ASSERT_TRUE(model.allocate(6 * kMiB, kPool));  // the pool's own requests still find it
    EXPECT_EQ(model.reserved(), 20 * kMiB);
}

TEST(AllocatorModel, SegmentChangesAndViewsAreWhatATraceAndASnapshotRecord) {
    CachingAllocatorModel model = model_with("", 40 * kMiB);
    model.keep_segment_changes(true);
    const auto a = model.allocate(3 * kMiB, 0);
    const auto b = model.allocate(100, 0);
    ASSERT_TRUE(a && b);
    std::vector<SegmentChange> changes = model.take_segment_changes();
    ASSERT_EQ(changes.size(), 2u);
    EXPECT_EQ(changes[0].kind, SegmentChange::Kind::Alloc);
    EXPECT_EQ(changes[0].size, 20 * kMiB);
    EXPECT_EQ(changes[1].size, 2 * kMiB);
    EXPECT_TRUE(model.take_segment_changes().empty());  // taken once
    // In address order, each segment tiled by its blocks: handed out, then the free rest.
    const std::vector<SegmentView> views = model.segment_views();
    ASSERT_EQ(views.size(), 2u);
    EXPECT_EQ(views[0].address, *a);
    EXPECT_EQ(views[0].size, 20 * kMiB);
    EXPECT_FALSE(views[0].small);
    ASSERT_EQ(views[0].blocks.size(), 2u);
    EXPECT_TRUE(views[0].blocks[0].allocated);
    EXPECT_EQ(views[0].blocks[1].size, 17 * kMiB);
    EXPECT_FALSE(views[0].blocks[1].allocated);
    EXPECT_TRUE(views[1].small);
    // 30 MiB passes the capacity beside 22: the free small segment is released and the
    // allocation retried, and still fails.
    model.free(*b);
    EXPECT_FALSE(model.allocate(30 * kMiB, 0));
    changes = model.take_segment_changes();
    ASSERT_EQ(changes.size(), 1u);
    EXPECT_EQ(changes[0].kind, SegmentChange::Kind::Free);
    EXPECT_EQ(changes[0].size, 2 * kMiB);
    EXPECT_EQ(model.stats().retries, 1);
    EXPECT_EQ(model.stats().free_blocks, 1);
}

TEST(AllocatorModel, FollowingATracePlacesBlocksWhereTheAllocatorDid) {
    CachingAllocatorModel model = model_with("");
    EXPECT_EQ(model.need(40960000, 0).bytes, 40 * kMiB);
    model.open_segment(1 << 30, 40 * kMiB, 0);
    ASSERT_TRUE(model.place(1 << 30, 40960000, 0));
    EXPECT_EQ(model.allocated(), 40 * kMiB);     // 1 MiB left: not split
    EXPECT_FALSE(model.place(1 << 30, 512, 0));  // no free block there
}

TEST(AllocatorModel, ATraceThatMapsMemoryTheModelHoldsIsNotFollowed) {
    // A damaged snapshot's trace opened a segment over one already open and mapped pages over
    // a free block: followed, the block was counted twice and later released twice.
    CachingAllocatorModel model = model_with("");
    model.open_segment(1 << 30, 20 * kMiB, 0);
    model.open_segment(1 << 30, 20 * kMiB, 0);
    model.open_segment((1 << 30) + kMiB, 2 * kMiB, 0);
    model.map_pages((1 << 30) + 4 * kMiB, 2 * kMiB, 0);
    model.open_segment(1 << 29, 0, 0);
    EXPECT_EQ(model.reserved(), 20 * kMiB);
    EXPECT_EQ(model.stats().free_blocks, 1);
    model.empty_cache();
    EXPECT_EQ(model.reserved(), 0);

    // A segment the model opens itself never lands on one a trace opened.
    model.open_segment(std::int64_t(1) << 40, 20 * kMiB, 0);
    const auto own = model.allocate(30 * kMiB, 0);
    ASSERT_TRUE(own);
    EXPECT_GE(*own, (std::int64_t(1) << 40) + 20 * kMiB);
    model.free(*own);
    model.empty_cache();

    // Empty or negative ranges, and requests no device could hold, change nothing.
    model.open_segment(1 << 30, 20 * kMiB, 0);
    model.release(1 << 30, 0);
    model.release(1 << 30, -kMiB);
    EXPECT_FALSE(model.allocate(std::int64_t(1) << 51, 0));
    EXPECT_EQ(model.reserved(), 20 * kMiB);
    model.empty_cache();

    // Memory beside what it holds is new memory.
    model.open_segment(1 << 30, 2 * kMiB, 0);
    model.open_segment((1 << 30) + 2 * kMiB, 2 * kMiB, 0);
    EXPECT_EQ(model.reserved(), 4 * kMiB);
}

// Requests of about a pebibyte each, every one 2 MiB larger than the last and freed before the
// next (sizes a snapshot's reader accepts): without expandable segments each opens a segment of
// its own, the cache is emptied when full, and the model's addresses run out after about 8,000.
// Each request is then refused as one no device holds, never handed an address the model does
// not hold (it crashed after 4,096 of them), and no figure runs negative or past kMostMemory.
TEST(AllocatorModel, PebibyteRequestsWithoutEndAreRefusedOnceTheModelIsFull) {
    for (const char* conf : {"", "expandable_segments:True"}) {
        CachingAllocatorModel model = model_with(conf);
        int refused = 0;
        constexpr std::int64_t kRequests = 10000;
        for (std::int64_t i = 0; i < kRequests; ++i) {
            const std::int64_t size = (std::int64_t(1) << 50) - (kRequests - i) * 2 * kMiB;
            const auto address = model.allocate(size, 0);
            if (!address) {
                ++refused;
                continue;
            }
            ASSERT_GE(model.allocated(), size) << conf << " request " << i;
            ASSERT_LE(model.reserved(), kMostMemory) << conf << " request " << i;
            model.free(*address);
        }
        if (*conf == '\0') {
            EXPECT_GT(refused, 0);
        }
        EXPECT_EQ(model.allocated(), 0) << conf;
        model.empty_cache();
        EXPECT_GE(model.reserved(), 0) << conf;
    }
}

// The statistics are kept as blocks change (a replay asks them at every new peak and OOM, and
// counting them afresh made replays quadratic): after every step of a long random program, in
// each configuration, they are what the blocks themselves add up to, pool by pool.
TEST(AllocatorModel, KeptStatisticsAreWhatTheBlocksAddUpTo) {
    for (const char* conf : {"", "expandable_segments:True", "max_split_size_mb:30",
                             "expandable_segments:True,roundup_power2_divisions:4"}) {
        CachingAllocatorModel model = model_with(conf, 400 * kMiB);
        std::mt19937 random(7);
        std::vector<std::int64_t> alive;
        const std::int64_t sizes[] = {512, 4096, 100000, kMiB, 3 * kMiB, 13 * kMiB, 50 * kMiB};
        for (int step = 0; step < 3000; ++step) {
            const unsigned choice = random() % 100;
            if (!alive.empty() && choice < 45) {
                const std::size_t at = random() % alive.size();
                model.free(alive[at]);
                alive.erase(alive.begin() + std::ptrdiff_t(at));
            } else if (choice < 47) {
                model.empty_cache();
            } else if (const auto address = model.allocate(sizes[random() % 7], random() % 3)) {
                alive.push_back(*address);
            }
            for (const std::optional<bool> small :
                 {std::optional<bool>(), std::optional(false), std::optional(true)}) {
                ModelStats counted;
                for (const SegmentView& view : model.segment_views()) {
                    counted.reserved += view.size;
                    for (const SegmentView::Piece& piece : view.blocks) {
                        counted.allocated += piece.allocated ? piece.size : 0;
                        if (!piece.allocated && (!small || view.small == *small)) {
                            counted.cached_free += piece.size;
                            counted.largest_free = std::max(counted.largest_free, piece.size);
                            ++counted.free_blocks;
                        }
                    }
                }
                const ModelStats kept = !small   ? model.stats()
                                        : *small ? model.stats_for(512)
                                                 : model.stats_for(3 * kMiB);
                ASSERT_EQ(kept.reserved, counted.reserved) << conf << " step " << step;
                ASSERT_EQ(kept.allocated, counted.allocated) << conf << " step " << step;
                ASSERT_EQ(kept.cached_free, counted.cached_free) << conf << " step " << step;
                ASSERT_EQ(kept.largest_free, counted.largest_free) << conf << " step " << step;
                ASSERT_EQ(kept.free_blocks, counted.free_blocks) << conf << " step " << step;
            }
            ASSERT_LE(model.stats().segments, std::int64_t(model.segment_views().size()))
                << conf << " step " << step;
            ASSERT_EQ(model.stats().segments == 0, model.reserved() == 0) << conf;
        }
    }
}

}  // namespace
}  // namespace oomlab::allocator
