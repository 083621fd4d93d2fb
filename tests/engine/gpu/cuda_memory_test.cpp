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

constexpr std::int64_t kMiB = 1 << 20;
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
