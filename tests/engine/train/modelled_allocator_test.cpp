// The CPU as a GPU in miniature: tensors allocated through the tracking allocator with the
// caching allocator modelled (memory.alloc_conf), in sequences worked out by hand.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <algorithm>

#include "oomlab/allocator/allocator_settings.h"
#include "oomlab/measure/memory_history.h"
#include "oomlab/measure/tracking_allocator.h"
#include "test_support.h"

namespace oomlab::memory {
namespace {

using test::kMiB;

at::Tensor bytes(std::int64_t count) {
    return at::empty({count}, at::kByte);
}

// Starts the model for one test and stops it after, whatever the test did.
class ModelledCpu : public ::testing::Test {
protected:
    void start(const std::string& conf, std::int64_t capacity) {
        install_tracking_allocator();
        start_cpu_allocator_model(allocator::parse_alloc_conf(conf), capacity);
    }
    void TearDown() override { stop_cpu_allocator_model(); }

    static allocator::ModelStats stats() { return cpu_allocator_model_stats().value(); }
};

TEST_F(ModelledCpu, TensorsReserveSegmentsThatStayCachedUntilEmptied) {
    start("backend:native", 0);
    {
        const at::Tensor small = bytes(100);       // 512 bytes of a 2 MiB small-pool segment
        const at::Tensor large = bytes(3 * kMiB);  // 3 MiB of a 20 MiB large-pool segment
        EXPECT_EQ(stats().reserved, 22 * kMiB);
        EXPECT_EQ(stats().allocated, 512 + 3 * kMiB);
    }
    // Freed tensors leave their segments cached, as on a GPU.
    EXPECT_EQ(stats().allocated, 0);
    EXPECT_EQ(stats().reserved, 22 * kMiB);
    EXPECT_EQ(stats().cached_free, 22 * kMiB);
    EXPECT_EQ(cpu_allocator_model_peak()->allocated, 512 + 3 * kMiB);
    EXPECT_EQ(cpu_allocator_model_peak()->reserved, 22 * kMiB);
    empty_cpu_allocator_model_cache();
    EXPECT_EQ(stats().reserved, 0);
}

// A 100 MiB segment, freed, then split by two 30 MiB tensors; the first freed leaves 70 MiB
// cached in two pieces of 30 and 40 MiB. 50 MiB fits neither, and a new 50 MiB segment passes
// the 140 MiB cap beside the 100 held: out of memory, fragmentation.
void fragment_then_ask_for_50_mib() {
    { const at::Tensor whole = bytes(100 * kMiB); }
    at::Tensor first = bytes(30 * kMiB);
    const at::Tensor second = bytes(30 * kMiB);
    first.reset();
    const at::Tensor asked = bytes(50 * kMiB);
}

TEST_F(ModelledCpu, AFullCapWithCachedPiecesIsFragmentationAndOomsLikeTheGpu) {
    start("backend:native", 140 * kMiB);
    const std::int64_t ooms = cpu_tensor_stats().oom_count;
    try {
        fragment_then_ask_for_50_mib();
        FAIL() << "50 MiB were allocated beside 100 MiB under a 140 MiB cap";
    } catch (const c10::OutOfMemoryError& error) {
        const std::string message = error.what();
        EXPECT_NE(message.find("Tried to allocate 50.0 MiB"), std::string::npos) << message;
        EXPECT_NE(message.find("70.0 MiB reserved but unallocated"), std::string::npos) << message;
    }
    EXPECT_EQ(cpu_tensor_stats().oom_count, ooms + 1);
    const std::optional<Fragmentation> refusal = cpu_allocator_model_last_refusal();
    ASSERT_TRUE(refusal.has_value());
    EXPECT_EQ(refusal->requested_bytes, 50 * kMiB);
    EXPECT_EQ(refusal->reserved_free_bytes, 70 * kMiB);
    EXPECT_EQ(refusal->largest_free_block, 40 * kMiB);
    EXPECT_EQ(refusal->free_blocks, 2);
    EXPECT_EQ(refusal->unreserved_free_bytes, 40 * kMiB);
    EXPECT_TRUE(refusal->fragmented());
    EXPECT_EQ(stats().retries, 1);  // the cache was released (nothing whole) and tried again
}

TEST_F(ModelledCpu, ExpandableSegmentsGrowIntoTheSameCapInstead) {
    start("expandable_segments:True", 140 * kMiB);
    EXPECT_NO_THROW(fragment_then_ask_for_50_mib());
    // The 50 MiB took the 40 MiB free at the end and one more 20 MiB page: 120 MiB mapped,
    // cached now that the tensors are gone.
    EXPECT_EQ(stats().reserved, 120 * kMiB);
    EXPECT_EQ(stats().allocated, 0);
    EXPECT_FALSE(cpu_allocator_model_last_refusal().has_value());
}

TEST_F(ModelledCpu, TheSnapshotHoldsTheModelsSegmentsAndItsTrace) {
    start("backend:native", 0);
    MemoryHistory history(c10::Device(c10::kCPU));
    const at::Tensor kept = bytes(3 * kMiB);
    { const at::Tensor freed = bytes(1000); }
    const MemorySnapshot snapshot = history.snapshot();
    ASSERT_EQ(snapshot.segments.size(), 2u);  // a small segment and a large one
    std::int64_t reserved = 0;
    for (const SnapshotSegment& segment : snapshot.segments) {
        reserved += segment.total_size;
        std::int64_t tiled = 0;
        for (const SnapshotBlock& block : segment.blocks) {
            tiled += block.size;
        }
        EXPECT_EQ(tiled, segment.total_size);
    }
    EXPECT_EQ(reserved, 22 * kMiB);
    using Action = TraceEvent::Action;
    std::vector<Action> actions;
    for (const TraceEvent& event : snapshot.device_traces.at(0)) {
        actions.push_back(event.action);
    }
    EXPECT_EQ(actions,
              (std::vector<Action>{Action::SegmentAlloc, Action::Alloc, Action::SegmentAlloc,
                                   Action::Alloc, Action::FreeRequested, Action::FreeCompleted}));
    EXPECT_EQ(snapshot.device_traces[0][0].size, 20 * kMiB);
    EXPECT_EQ(snapshot.device_traces[0][3].size, 1000);
}

}  // namespace
}  // namespace oomlab::memory
