// Where a run's bytes came from, kept with the run; two runs diffed; an OOM's free space.
#include <gtest/gtest.h>

#include "oomlab/run/memory_diff.h"
#include "oomlab/store/run_store.h"
#include "test_support.h"

namespace oomlab {
namespace {

RunOutcome outcome_with_modules() {
    RunOutcome outcome;
    outcome.status = RunStatus::Oom;
    outcome.steps = 7;
    outcome.peak_bytes = 5000;
    outcome.breakdown.activations = 3000;
    outcome.by_module = {{"embeddings", 1000, 1000, 2000, 10},
                         {"block 1", 300, 0, 600, 2900},
                         {"loss", 0, 0, 0, 90},
                         {"other", 0, 0, 0, std::nullopt}};
    outcome.module_samples = {{1, "forward", "block 1", 2800}, {1, "backward", "block 1", 1200}};
    outcome.staircase = {{"empty", 0, 100}, {"weights", 1300, std::nullopt}};
    outcome.fragmentation = Fragmentation{4096, 6000, 2048, 5, 0};
    return outcome;
}

TEST(RunDetails, AreKeptWithTheRunAndGoWithIt) {
    test::TempDir dir;
    RunStore store = RunStore::open(dir.file("runs.sqlite"));
    const std::int64_t id = store.create_run({"details", "{}", "cpu", "", "", 1});
    store.finish_run(id, outcome_with_modules());

    const RunRecord run = *store.find_run(id);
    ASSERT_EQ(run.outcome.by_module.size(), 4u);
    EXPECT_EQ(run.outcome.by_module[1].module, "block 1");
    EXPECT_EQ(run.outcome.by_module[1].optimizer_state, 600);
    EXPECT_EQ(run.outcome.by_module[1].activations, 2900);
    EXPECT_FALSE(run.outcome.by_module[3].activations.has_value());
    ASSERT_EQ(run.outcome.staircase.size(), 2u);
    EXPECT_EQ(run.outcome.staircase[0].device_used_bytes, 100);
    EXPECT_EQ(run.outcome.staircase[1].allocated_bytes, 1300);
    ASSERT_TRUE(run.outcome.fragmentation.has_value());
    EXPECT_EQ(run.outcome.fragmentation->free_blocks, 5);
    const std::vector<ModuleSample> samples = store.module_samples(id);
    ASSERT_EQ(samples.size(), 2u);
    EXPECT_EQ(samples[1].phase, "backward");
    EXPECT_EQ(samples[1].activations, 1200);

    EXPECT_TRUE(store.delete_run(id));
    EXPECT_TRUE(store.module_samples(id).empty());
}

TEST(RunDetails, ARunWithoutThemReadsBackWithout) {
    test::TempDir dir;
    RunStore store = RunStore::open(dir.file("runs.sqlite"));
    const std::int64_t id = store.create_run({"plain", "{}", "cpu", "", "", 1});
    store.finish_run(id, RunOutcome{});
    const RunRecord run = *store.find_run(id);
    EXPECT_TRUE(run.outcome.by_module.empty());
    EXPECT_TRUE(run.outcome.staircase.empty());
    EXPECT_FALSE(run.outcome.fragmentation.has_value());
}

TEST(MemoryDiff, PutsTheLargestDifferenceFirst) {
    const RunOutcome a = outcome_with_modules();
    RunOutcome b = a;
    b.peak_bytes = 2500;
    b.breakdown.activations = 500;
    b.breakdown.other = 9000;  // process memory: beside the peak, listed after it
    b.by_module[1].activations = 400;
    b.by_module[0].activations = 20;
    b.by_module.push_back({"head", 8, 8, 16, 4});
    const MemoryDiff diff = diff_memory(a, b);
    EXPECT_EQ(diff.a_peak, 5000);
    EXPECT_EQ(diff.b_peak, 2500);
    ASSERT_EQ(diff.by_category.size(), 2u);
    EXPECT_EQ(diff.by_category[0].category, "activations");
    EXPECT_EQ(diff.by_category[0].difference(), -2500);
    EXPECT_EQ(diff.by_category[1].category, "other");
    ASSERT_GE(diff.by_module.size(), 3u);
    EXPECT_EQ(diff.by_module[0].module, "block 1");
    EXPECT_EQ(diff.by_module[0].category, "activations");
    EXPECT_EQ(diff.by_module[0].difference(), -2500);
    // A module only B has counts 0 in A; equal rows are left out.
    EXPECT_EQ(diff.by_module[1].module, "head");
    EXPECT_EQ(diff.by_module[1].a_bytes, 0);
    for (const MemoryDifference& row : diff.by_module) {
        EXPECT_NE(row.difference(), 0) << row.module << " " << row.category;
    }
    EXPECT_NE(memory_diff_json(diff).find("\"by_module\":[{\"category\":\"activations\","
                                          "\"module\":\"block 1\",\"a_bytes\":2900"),
              std::string::npos)
        << memory_diff_json(diff);
}

TEST(Fragmentation, ReadsTheRequestFromBothAllocatorsMessages) {
    EXPECT_EQ(requested_bytes_in("CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; "
                                 "79.10 GiB total capacity)"),
              20 << 20);
    EXPECT_EQ(requested_bytes_in("CPU out of memory. Tried to allocate 1.5 KiB while ..."), 1536);
    EXPECT_EQ(requested_bytes_in("Tried to allocate 2.00 GiB"), std::int64_t(2) << 30);
    EXPECT_EQ(requested_bytes_in("Tried to allocate 512 B"), 512);
    EXPECT_FALSE(requested_bytes_in("out of memory").has_value());
    EXPECT_FALSE(requested_bytes_in("Retried to allocate 2 GiB").has_value());
}

// The texts PyTorch prints, as its libraries spell them (2.x: libc10_cuda's and libc10's
// strings; 1.x: its caching allocator's older wording).
TEST(Fragmentation, ReadsTheRequestFromPyTorchsOwnMessages) {
    EXPECT_EQ(requested_bytes_in(
                  "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 "
                  "has a total capacity of 79.15 GiB of which 3.56 MiB is free. Process 3004139 "
                  "has 79.14 GiB memory in use. Of the allocated memory 77.86 GiB is allocated by "
                  "PyTorch, and 811.53 MiB is reserved by PyTorch but unallocated. If reserved but "
                  "unallocated memory is large try setting "
                  "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation."),
              20 << 20);
    EXPECT_EQ(requested_bytes_in("CUDA out of memory. Tried to allocate 512 bytes. GPU 0 has a "
                                 "total capacity of 15.78 GiB of which 0 bytes is free."),
              512);
    EXPECT_EQ(requested_bytes_in("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB "
                                 "(GPU 0; 15.78 GiB total capacity; 12.10 GiB already allocated; "
                                 "1.20 GiB free; 13.40 GiB reserved in total by PyTorch) If "
                                 "reserved memory is >> allocated memory try setting "
                                 "max_split_size_mb to avoid fragmentation."),
              std::int64_t(2) << 30);
    EXPECT_EQ(requested_bytes_in("DefaultCPUAllocator: can't allocate memory: you tried to "
                                 "allocate 1073741824 bytes. Error code 12 (Cannot allocate "
                                 "memory)"),
              std::int64_t(1) << 30);
    EXPECT_FALSE(requested_bytes_in("CUDA out of memory. Tried to allocate more than 1EB memory.")
                     .has_value());
    EXPECT_FALSE(requested_bytes_in("Tried to allocate lots").has_value());
}

TEST(Fragmentation, TellsPiecesFromWantOfMemory) {
    // 6000 free in 5 blocks, none of 4096: fragmented, and the advice says what helps.
    const Fragmentation pieces{4096, 6000, 2048, 5, 0};
    EXPECT_TRUE(pieces.fragmented());
    EXPECT_NE(describe_fragmentation(pieces, "").find("expandable_segments:True"),
              std::string::npos);
    // Already on: the advice does not ask for it again (PyTorch's own message does).
    const std::string already = describe_fragmentation(pieces, "expandable_segments:True");
    EXPECT_EQ(already.find("expandable_segments:True"), std::string::npos) << already;
    EXPECT_NE(already.find("already on"), std::string::npos) << already;
    // A block large enough exists: the allocator would have used it; not fragmentation.
    EXPECT_FALSE((Fragmentation{4096, 6000, 4096, 2, 0}).fragmented());
    // Too little free in all: want of memory, and no advice about segments.
    const Fragmentation little{4096, 1000, 1000, 1, 1000};
    EXPECT_FALSE(little.fragmented());
    EXPECT_EQ(describe_fragmentation(little, "").find("expandable_segments"), std::string::npos);
    EXPECT_NE(describe_fragmentation(little, "").find("not enough memory"), std::string::npos);
    // A new segment would fit: the cap or device still had room, so not fragmentation either.
    // For 4096 bytes that is a small-pool segment of 2 MiB; 8 MiB asks for a 20 MiB one.
    EXPECT_EQ((Fragmentation{4096, 6000, 2048, 5, 0}).segment_bytes(), 2 << 20);
    EXPECT_FALSE((Fragmentation{4096, 6000, 2048, 5, 2 << 20}).fragmented());
    EXPECT_TRUE((Fragmentation{4096, 6000, 2048, 5, 8192}).fragmented());
    const Fragmentation no_room_to_grow{8 << 20, 18 << 20, 4 << 20, 10, 12 << 20};
    EXPECT_EQ(no_room_to_grow.segment_bytes(), 20 << 20);
    EXPECT_TRUE(no_room_to_grow.fragmented());
    // Nothing cached, and less room than the request's segment: a 2.4 MiB request opens a
    // 20 MiB segment, which a 16 MiB cap does not hold. Want of memory, however much of the
    // cap is free; the segment it needed is named.
    const Fragmentation segment_too_large{2500000, 0, 0, 0, 16 << 20};
    EXPECT_FALSE(segment_too_large.fragmented());
    EXPECT_NE(describe_fragmentation(segment_too_large, "").find("reserves 20.0 MiB"),
              std::string::npos)
        << describe_fragmentation(segment_too_large, "");
    // Pieces that, handed back, would leave room for that segment: fragmented.
    EXPECT_TRUE((Fragmentation{2500000, 5 << 20, 2 << 20, 3, 16 << 20}).fragmented());
}

}  // namespace
}  // namespace oomlab
