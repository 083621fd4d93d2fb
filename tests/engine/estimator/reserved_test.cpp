// What the estimator predicts the caching allocator reserves: the step's tensors replayed
// through the allocator's model, worked out by hand on runs small enough to count.
#include <gtest/gtest.h>

#include <cstdint>

#include "oomlab/estimator/estimator.h"
#include "test_support.h"
#include "tiny_run.h"

namespace oomlab {
namespace {

using test::tiny;
using test::tiny_profile;

using test::kMiB;
constexpr std::int64_t kBlock = 512;  // the allocator's smallest block

// Every tensor of the tiny bag is under 512 bytes: each takes one block of the small pool's
// one 2 MiB segment. The replay peaks in the first backward, in the hidden layer: 17 resident
// blocks (the table, 4 parameters, 4 batches of 3), 11 saved in forward (the rows, the
// pooling's 3, the hidden layer's 4 with dropout, the loss's 3), less the loss's 3 freed, the
// logits' and hidden output's gradients handed on (the first already freed), the output
// layer's and hidden layer's weight gradients (4) and the gradient of the pooled input: 31.
TEST(ReservedMemory, ATinyRunFitsOneSmallSegment) {
    const MemoryEstimate estimate =
        estimate_memory(tiny({"memory.alloc_conf=backend:native"}), tiny_profile());
    EXPECT_TRUE(estimate.caching_allocator);
    EXPECT_EQ(estimate.reserved_peak_bytes, 2 * kMiB);
    EXPECT_EQ(estimate.breakdown.allocator_cache, 2 * kMiB - 31 * kBlock);
    EXPECT_EQ(estimate.reserved_bytes, estimate.peak_bytes + estimate.breakdown.allocator_cache);
}

// On the CPU without memory.alloc_conf the tensors are allocated as they are: nothing is
// cached, and the cap is compared with the tensors alone. What CUDA would reserve is still
// said.
TEST(ReservedMemory, WithoutACachingAllocatorNothingIsCached) {
    const MemoryEstimate estimate =
        estimate_memory(tiny({"device=cpu", "memory.cap_mb=1"}), tiny_profile());
    EXPECT_FALSE(estimate.caching_allocator);
    EXPECT_EQ(estimate.breakdown.allocator_cache, 0);
    EXPECT_EQ(estimate.reserved_peak_bytes, 2 * kMiB);
    EXPECT_TRUE(estimate.fits);
    EXPECT_TRUE(estimate_memory(tiny({"device=cuda"}), tiny_profile()).caching_allocator);
}

// Under a 1 MiB cap the tensors (about 1 KiB) fit, but the allocator's first segment is 2 MiB:
// the run cannot start, as on a GPU whose memory fraction is below one segment.
TEST(ReservedMemory, ASegmentLargerThanTheCapDoesNotFit) {
    const MemoryEstimate estimate = estimate_memory(
        tiny({"memory.alloc_conf=backend:native", "memory.cap_mb=1"}), tiny_profile());
    EXPECT_LT(estimate.peak_bytes, estimate.cap_bytes);
    EXPECT_TRUE(estimate.allocator_out_of_memory);
    EXPECT_FALSE(estimate.fits);
}

// A table of 100,000 x 4 floats (1,600,000 bytes) is a large-pool request: its segment is
// 20 MiB, which also holds its gradient, Adam's two moments and the update's two temporaries
// (9,600,000 bytes at most); the rest stays in one small segment. Expandable segments map
// pages of the same sizes (PyTorch maps the large pool 20 MiB at a time): one of each.
TEST(ReservedMemory, LargeRequestsShareATwentyMiBSegmentOrMapPages) {
    DataProfile profile = tiny_profile();
    profile.vocab_rows = 100000;
    const auto reserved = [&](const char* conf) {
        return *estimate_memory(tiny({"train.optimizer=adam", conf}), profile).reserved_peak_bytes;
    };
    EXPECT_EQ(reserved("memory.alloc_conf=backend:native"), 20 * kMiB + 2 * kMiB);
    EXPECT_EQ(reserved("memory.alloc_conf=expandable_segments:True"), 20 * kMiB + 2 * kMiB);
}

// ZeRO-2 and 3 keep a rank's share of each gradient: the replay knows whole tensors only.
TEST(ReservedMemory, NotPredictedForShardedGradients) {
    const MemoryEstimate estimate = estimate_memory(
        tiny({"memory.alloc_conf=backend:native", "distributed.shard=gradients"}), tiny_profile(),
        /*world_size=*/2);
    EXPECT_FALSE(estimate.reserved_bytes);
    EXPECT_EQ(estimate.breakdown.allocator_cache, 0);
}

}  // namespace
}  // namespace oomlab
