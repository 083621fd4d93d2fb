// Snapshots in memory_viz's format: the keys and values Python finds in the file.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "oomlab/common/errors.h"
#include "oomlab/snapshot_writer/memory_snapshot.h"
#include "test_support.h"

namespace oomlab::memory {
namespace {

using Action = TraceEvent::Action;

MemorySnapshot two_block_segment() {
    MemorySnapshot snapshot;
    SnapshotSegment segment;
    segment.address = 1 << 20;
    segment.total_size = 3072;
    segment.is_large = false;
    segment.blocks = {{1024, 1000, SnapshotBlock::State::ActiveAllocated, AllocationTag::Forward},
                      {2048, 0, SnapshotBlock::State::Inactive, AllocationTag::Untagged}};
    snapshot.segments.push_back(segment);
    snapshot.device_traces.push_back({
        {Action::SegmentAlloc, 1 << 20, 3072, 0, 10, AllocationTag::Forward},
        {Action::Alloc, 1 << 20, 1024, 0, 11, AllocationTag::Forward},
        {Action::Oom, 4096, 1 << 30, 0, 12, AllocationTag::Backward},
    });
    return snapshot;
}

nlohmann::json load(const MemorySnapshot& snapshot, const test::TempDir& dir) {
    const std::string path = dir.file("snapshot.pickle");
    write_snapshot_file(snapshot, path);
    const auto loaded = test::pickle_as_json(path);
    return loaded ? nlohmann::json::parse(*loaded) : nlohmann::json();
}

TEST(MemorySnapshot, HasTheKeysMemoryVizReads) {
    test::TempDir dir;
    const nlohmann::json json = load(two_block_segment(), dir);
    if (json.is_null()) {
        GTEST_SKIP() << "no python3 to read the pickle with";
    }
    ASSERT_TRUE(json.contains("segments"));
    ASSERT_TRUE(json.contains("device_traces"));
    const auto& segment = json["segments"][0];
    EXPECT_EQ(segment["address"], 1 << 20);
    EXPECT_EQ(segment["total_size"], 3072);
    EXPECT_EQ(segment["allocated_size"], 1024);
    EXPECT_EQ(segment["requested_size"], 1000);
    EXPECT_EQ(segment["segment_type"], "small");
    ASSERT_EQ(segment["blocks"].size(), 2u);
    EXPECT_EQ(segment["blocks"][0]["state"], "active_allocated");
    EXPECT_EQ(segment["blocks"][0]["frames"][0]["name"], "forward: activations");
    EXPECT_EQ(segment["blocks"][1]["address"], (1 << 20) + 1024);  // blocks tile the segment
    EXPECT_EQ(segment["blocks"][1]["state"], "inactive");
    EXPECT_TRUE(segment["blocks"][1]["frames"].empty());

    const auto& trace = json["device_traces"][0];
    ASSERT_EQ(trace.size(), 3u);
    EXPECT_EQ(trace[0]["action"], "segment_alloc");
    EXPECT_EQ(trace[1]["action"], "alloc");
    EXPECT_EQ(trace[1]["addr"], 1 << 20);
    EXPECT_EQ(trace[1]["size"], 1024);
    EXPECT_EQ(trace[1]["time_us"], 11);
    EXPECT_EQ(trace[2]["action"], "oom");
    EXPECT_EQ(trace[2]["device_free"], 4096);  // as PyTorch names it for an OOM
    EXPECT_FALSE(trace[2].contains("addr"));
    EXPECT_EQ(trace[2]["frames"][0]["name"], "backward: gradients");
}

// The free blocks that could serve a request are those of its pool: the small segment's 2 KiB
// for a small request, the large segment's for a large one.
TEST(MemorySnapshot, TheFreeBlocksForARequestAreThoseOfItsPool) {
    MemorySnapshot snapshot = two_block_segment();  // small: 2 KiB free
    SnapshotSegment large;
    large.address = 64 << 20;
    large.total_size = 20 << 20;
    large.blocks = {{3 << 20, 3 << 20, SnapshotBlock::State::ActiveAllocated, {}},
                    {12 << 20, 0, SnapshotBlock::State::Inactive, {}},
                    {5 << 20, 0, SnapshotBlock::State::Inactive, {}}};
    snapshot.segments.push_back(large);
    const FreeBlocks for_large = free_blocks_for(snapshot.segments, 0, 4 << 20);
    EXPECT_EQ(for_large.bytes, 17 << 20);
    EXPECT_EQ(for_large.largest, 12 << 20);
    EXPECT_EQ(for_large.count, 2);
    const FreeBlocks for_small = free_blocks_for(snapshot.segments, 0, 1 << 20);
    EXPECT_EQ(for_small.bytes, 2048);
    EXPECT_EQ(for_small.count, 1);
    EXPECT_EQ(free_blocks_for(snapshot.segments, 1, 4 << 20).count, 0);  // another device
    EXPECT_EQ(segment_usage(snapshot.segments, 0).free.bytes, (17 << 20) + 2048);
}

TEST(MemorySnapshot, AFolderThatIsNotThereIsAnErrorNamingTheKey) {
    test::TempDir dir;
    try {
        write_snapshot_file(two_block_segment(), dir.file("missing/snapshot.pickle"));
        FAIL() << "expected an error";
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("debug.memory_snapshot"), std::string::npos)
            << error.what();
    }
    EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

}  // namespace
}  // namespace oomlab::memory
