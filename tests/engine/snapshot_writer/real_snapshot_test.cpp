// The segments of a snapshot PyTorch itself recorded on a GPU (GPT-2 generation, in the
// shared data) read into the engine's form: what the CUDA caching allocator's segments and
// blocks become in a run (cuda_memory.cpp), checked against the totals PyTorch wrote beside
// them, and the fragmentation verdict an out-of-memory at that moment would get.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "oomlab/run/fragmentation.h"
#include "oomlab/snapshot_writer/memory_snapshot.h"
#include "test_support.h"

namespace oomlab::memory {
namespace {

SnapshotBlock::State state_named(const std::string& name) {
    if (name == "active_allocated") {
        return SnapshotBlock::State::ActiveAllocated;
    }
    if (name == "active_pending_free") {
        return SnapshotBlock::State::ActivePendingFree;
    }
    EXPECT_EQ(name, "inactive");
    return SnapshotBlock::State::Inactive;
}

std::vector<SnapshotSegment> segments_from(const nlohmann::json& snapshot) {
    std::vector<SnapshotSegment> segments;
    for (const auto& from : snapshot.at("segments")) {
        SnapshotSegment& segment = segments.emplace_back();
        segment.device = from.at("device");
        segment.address = from.at("address");
        segment.total_size = from.at("total_size");
        segment.is_large = from.at("segment_type") == "large";
        for (const auto& block : from.at("blocks")) {
            segment.blocks.push_back(
                {block.at("size"), block.at("requested_size"), state_named(block.at("state"))});
        }
    }
    return segments;
}

class RealSnapshot : public ::testing::Test {
protected:
    void SetUp() override {
        OOMLAB_REQUIRE_SHARED_DATA("snapshots/gpt2_generate_2648MiB.pickle");
        const auto text = test::pickle_as_json(test::shared_data_dir() +
                                               "/snapshots/gpt2_generate_2648MiB.pickle");
        if (!text) {
            GTEST_SKIP() << "no python3 to read the pickle with";
        }
        m_snapshot = nlohmann::json::parse(*text);
    }
    nlohmann::json m_snapshot;
};

TEST_F(RealSnapshot, SegmentUsageAgreesWithTheTotalsPyTorchWrote) {
    const SegmentUsage usage = segment_usage(segments_from(m_snapshot), 0);
    std::int64_t allocated_by_pytorch = 0;  // each segment's own allocated_size
    for (const auto& segment : m_snapshot.at("segments")) {
        allocated_by_pytorch += segment.at("allocated_size").get<std::int64_t>();
    }
    EXPECT_EQ(usage.reserved, std::int64_t(2648) << 20);  // the file's name says 2648 MiB
    EXPECT_EQ(usage.allocated, allocated_by_pytorch);
    // Nothing was pending at the dump: every reserved byte is held or free.
    EXPECT_EQ(usage.reserved, usage.allocated + usage.free.bytes);
    EXPECT_EQ(usage.free.count, 15);
    EXPECT_EQ(usage.free.largest, 501219328);  // one whole 478 MiB segment, unused
    EXPECT_EQ(segment_usage(segments_from(m_snapshot), 1).reserved, 0);  // no other device
}

TEST_F(RealSnapshot, ARequestLargerThanEveryFreeBlockIsFragmentationWithoutRoomToGrow) {
    const SegmentUsage usage = segment_usage(segments_from(m_snapshot), 0);
    // 860 MiB free in 15 blocks; with the device full, 600 MiB fits none of them.
    const Fragmentation at_oom{std::int64_t(600) << 20, usage.free.bytes, usage.free.largest,
                               usage.free.count, 0};
    EXPECT_TRUE(at_oom.fragmented());
    EXPECT_NE(describe_fragmentation(at_oom, "").find("expandable_segments:True"),
              std::string::npos);
    // 400 MiB fits the largest free block: the allocator would have reused it.
    const Fragmentation fits{std::int64_t(400) << 20, usage.free.bytes, usage.free.largest,
                             usage.free.count, 0};
    EXPECT_FALSE(fits.fragmented());
}

}  // namespace
}  // namespace oomlab::memory
