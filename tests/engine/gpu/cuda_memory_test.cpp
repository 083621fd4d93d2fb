// The CUDA caching allocator as the monitor reports it: the figures torch.cuda.memory_stats
// gives, the cache empty_cache hands back, NVML's device figures, and snapshots.
#include <nlohmann/json.hpp>

#include <set>

#include "gpu_test_support.h"
#include "measure/nvml.h"
#include "oomlab/measure/memory_monitor.h"
#include "test_support.h"
#if OOMLAB_WITH_CUDA
#include "oomlab/measure/cuda_memory.h"
#endif

namespace oomlab {
namespace {

using test::kMiB;
const c10::Device kCuda(c10::kCUDA, 0);

TEST(CudaMemory, AllocatedReservedAndPeakFollowTheCachingAllocator) {
    OOMLAB_REQUIRE_CUDA();
    memory::release_cached_memory(kCuda);
    memory::MemoryMonitor monitor(kCuda, /*cap_bytes=*/0);
    {
        const torch::Tensor four_mib =
            torch::empty({kMiB}, torch::dtype(torch::kFloat32).device(kCuda));
        const memory::MemorySample held = monitor.sample();
        EXPECT_EQ(held.allocated, 4 * kMiB);
        EXPECT_GE(held.reserved, 4 * kMiB);
        EXPECT_EQ(held.step_peak, 4 * kMiB);
        EXPECT_EQ(held.alloc_retries, 0);
    }
    const memory::MemorySample freed = monitor.sample();
    EXPECT_EQ(freed.allocated, 0);
    EXPECT_GE(freed.reserved, 4 * kMiB) << "the freed block stays cached";
    EXPECT_EQ(freed.step_peak, 4 * kMiB);
    monitor.begin_step();
    EXPECT_EQ(monitor.sample().step_peak, 0);
    EXPECT_EQ(monitor.run_peak(), 4 * kMiB);
    memory::release_cached_memory(kCuda);
    EXPECT_EQ(monitor.sample().reserved, 0) << "empty_cache returns the cached block";
}

TEST(CudaMemory, NvmlReportsTheDevice) {
    OOMLAB_REQUIRE_CUDA();
    ASSERT_NE(memory::Nvml::instance(), nullptr) << memory::Nvml::missing_reason();
    memory::MemoryMonitor monitor(kCuda, 0);
    const memory::MemorySample sample = monitor.sample();
    ASSERT_TRUE(sample.device_used && sample.device_total);
    EXPECT_GT(*sample.device_total, 1024 * kMiB);
    EXPECT_GT(*sample.device_used, 0);
    EXPECT_LE(*sample.device_used, *sample.device_total);
}

TEST(CudaMemory, ACapRefusesAllocationsPastIt) {
    OOMLAB_REQUIRE_CUDA();
    memory::release_cached_memory(kCuda);
    memory::MemoryMonitor monitor(kCuda, /*cap_bytes=*/64 * kMiB);
    const auto options = torch::dtype(torch::kFloat32).device(kCuda);
    EXPECT_NO_THROW(torch::empty({8 * kMiB}, options));                       // 32 MiB
    EXPECT_THROW(torch::empty({32 * kMiB}, options), c10::OutOfMemoryError);  // 128 MiB
    EXPECT_EQ(monitor.sample().oom_count, 1);
}

#if OOMLAB_WITH_CUDA
// What an OOM's verdict reads: the cached free blocks of the pool that would serve the failed
// request. Other tests of this process may leave blocks in use, so the changes are compared.
TEST(CudaMemory, FreeBlocksAreCountedInTheRequestsOwnPool) {
    OOMLAB_REQUIRE_CUDA();
    memory::release_cached_memory(kCuda);
    const std::int64_t large_request = 40 * kMiB;
    const std::int64_t small_request = 512;
    const memory::FreeBlocks large_before = memory::cuda::free_blocks(0, large_request);
    const memory::FreeBlocks small_before = memory::cuda::free_blocks(0, small_request);
    const auto bytes = torch::dtype(torch::kUInt8).device(kCuda);
    const torch::Tensor kept = torch::empty({24 * kMiB}, bytes);
    {
        // Each opens a segment of its own, left cached and free when it is dropped.
        const torch::Tensor large = torch::empty({24 * kMiB}, bytes);
        const torch::Tensor small = torch::empty({4096}, bytes);
    }
    const memory::FreeBlocks large_after = memory::cuda::free_blocks(0, large_request);
    const memory::FreeBlocks small_after = memory::cuda::free_blocks(0, small_request);
    EXPECT_EQ(large_after.bytes - large_before.bytes, 24 * kMiB);
    EXPECT_GE(large_after.largest, 24 * kMiB);
    EXPECT_LE(small_after.bytes - small_before.bytes, 2 * kMiB)
        << "the large pool's free block is not the small pool's";
    EXPECT_LT(small_after.largest, 24 * kMiB);
    memory::release_cached_memory(kCuda);
}

// The verdict on an OOM reads the allocator as it was when the request failed. The tensors of
// the failing scope are freed while the error unwinds; read afterwards, their blocks would be
// free space that was not there.
TEST(CudaMemory, FreeSpaceIsReadAsItWasWhenTheRequestFailed) {
    OOMLAB_REQUIRE_CUDA();
    memory::release_cached_memory(kCuda);
    const std::int64_t free_before = memory::cuda::free_blocks(0, 32 * kMiB).bytes;
    const memory::MemoryMonitor monitor(kCuda, /*cap_bytes=*/64 * kMiB);
    const auto bytes = torch::dtype(torch::kUInt8).device(kCuda);
    try {
        const torch::Tensor held = torch::empty({40 * kMiB}, bytes);
        const torch::Tensor refused = torch::empty({32 * kMiB}, bytes);
        FAIL() << "64 MiB held 72 MiB";
    } catch (const c10::OutOfMemoryError&) {
    }
    const std::optional<Fragmentation> free = monitor.free_space(32 * kMiB);
    ASSERT_TRUE(free.has_value());
    EXPECT_EQ(free->reserved_free_bytes, free_before)
        << "the 40 MiB block was held when the request failed";
    EXPECT_LT(free->unreserved_free_bytes, 32 * kMiB);
    EXPECT_FALSE(free->fragmented());
    memory::release_cached_memory(kCuda);
}

// memory.alloc_conf is handed to the allocator of a process that has already started it: the
// segments opened after the monitor starts follow it.
TEST(CudaMemory, AllocConfTakesEffectForTheNextSegments) {
    OOMLAB_REQUIRE_CUDA();
    memory::release_cached_memory(kCuda);
    const auto bytes = torch::dtype(torch::kUInt8).device(kCuda);
    bool expandable = false;
    {
        const memory::MemoryMonitor monitor(kCuda, 0, "expandable_segments:True");
        const torch::Tensor held = torch::empty({24 * kMiB}, bytes);
        for (const memory::SnapshotSegment& segment : memory::cuda::history_snapshot().segments) {
            expandable = expandable || (segment.is_expandable && segment.is_large);
        }
    }
    memory::release_cached_memory(kCuda);
    memory::cuda::set_allocator_settings("expandable_segments:False");
    EXPECT_TRUE(expandable) << "no expandable segment holds the tensor allocated under the setting";
    const torch::Tensor after = torch::empty({24 * kMiB}, bytes);
    for (const memory::SnapshotSegment& segment : memory::cuda::history_snapshot().segments) {
        EXPECT_FALSE(segment.is_expandable) << "the setting was turned off again";
    }
}
#endif

TEST(CudaMemory, SnapshotOfAShortRunHasSegmentsAndTaggedTraces) {
    OOMLAB_REQUIRE_CUDA();
    test::TempDir dir;
    const std::string path = dir.file("cuda.pickle");
    RunStore store = RunStore::open(dir.file("runs.sqlite"));
    test::QuietListener quiet;
    std::atomic<bool> cancel{false};
    const RunResult result =
        run_and_record(test::cuda_config({"train.max_steps=3", "debug.memory_snapshot=" + path}),
                       "snapshot", store, quiet, cancel);
    ASSERT_EQ(result.outcome.status, RunStatus::Completed) << result.outcome.error;
    const auto loaded = test::pickle_as_json(path);
    if (!loaded) {
        GTEST_SKIP() << "no python3 to read the pickle with";
    }
    const auto snapshot = nlohmann::json::parse(*loaded);
    EXPECT_FALSE(snapshot["segments"].empty());
    ASSERT_FALSE(snapshot["device_traces"].empty());
    std::set<std::string> tags;
    for (const auto& event : snapshot["device_traces"][0]) {
        if (event["action"] == "alloc" && !event["frames"].empty()) {
            tags.insert(event["frames"][0]["name"].get<std::string>());
        }
    }
    EXPECT_TRUE(tags.count("forward: activations"));
    EXPECT_TRUE(tags.count("backward: gradients"));
    EXPECT_TRUE(tags.count("optimizer: state and update"));
}

}  // namespace
}  // namespace oomlab
