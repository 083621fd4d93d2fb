// What the text around an out-of-memory message tells of the program that printed it: pinned
// host memory, a serving engine's log, 0.x's THD, the settings' variable its hint names; and
// the look-alikes that must not be taken for them.
#include <gtest/gtest.h>

#include <string>

#include "oomlab/advice/oom_message.h"

namespace oomlab {
namespace {

constexpr const char* kDriverOom = "RuntimeError: CUDA error: out of memory\n";

OomMessage read(const std::string& text) {
    return explain_oom_message(text).message;
}

TEST(OomContext, PinningIsToldByItsFramesNotByANonBlockingArgument) {
    EXPECT_EQ(read("RuntimeError: Caught RuntimeError in pin memory thread for device 0.\n"
                   "Original Traceback (most recent call last):\n" +
                   std::string(kDriverOom))
                  .pinning,
              "the DataLoader's pin-memory thread (pin_memory=True)");
    EXPECT_EQ(read("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCCachingHostAllocator.cpp "
                   "line=258 error=2 : out of memory\n")
                  .pinning,
              "PyTorch's allocator of pinned host memory (CachingHostAllocator)");
    // Module.to's own line names non_blocking on every model moved to the GPU.
    EXPECT_EQ(read("    return t.to(device, dtype if t.is_floating_point() else None, "
                   "non_blocking)\n" +
                   std::string(kDriverOom))
                  .pinning,
              "");
    // The device's caching allocator failing is the device's memory, pinning or not.
    EXPECT_EQ(read("  File \"torch/utils/data/_utils/pin_memory.py\", line 55\n"
                   "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCCachingAllocator.cpp "
                   "line=510 error=2 : out of memory\n")
                  .pinning,
              "");
    // The caching allocator's own message is never about host memory.
    EXPECT_EQ(read("  File \"torch/utils/data/_utils/pin_memory.py\", line 55\n"
                   "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB.\n")
                  .pinning,
              "");
}

TEST(OomContext, AServingEnginesLogIsNamedAndATrainingScriptIsNot) {
    const std::string message =
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
        "786.00 MiB. GPU 0 has a total capacity of 79.11 GiB of which "
        "140.75 MiB is free.\n";
    EXPECT_EQ(read("(EngineCore_DP0 pid=8884) ERROR 10-31 [core.py:708] " + message).inference_app,
              "vLLM");
    EXPECT_EQ(
        read("  File \"/opt/sglang/python/sglang/srt/managers/scheduler.py\", line 3\n" + message)
            .inference_app,
        "SGLang");
    EXPECT_EQ(read("  File \"train.py\", line 41, in forward\n" + message).inference_app, "");
    const OomMessage vllm = read("vllm serve Qwen --gpu-memory-utilization 0.98\n" + message);
    EXPECT_EQ(vllm.inference_app, "vLLM");
    EXPECT_EQ(vllm.app_memory_share, "0.98");
    const OomMessage sglang =
        read("  File \"/sgl/python/sglang/srt/mem_cache/memory_pool.py\", line 90\n" + message);
    EXPECT_TRUE(sglang.app_pool_at_start);
    EXPECT_EQ(read("# ComfyUI Error Report\n" + message).inference_app, "ComfyUI");
    const OomExplanation served = explain_oom_message("VllmWorker rank=1 pid=7: " + message);
    for (const std::string& tried : served.tries) {
        EXPECT_EQ(tried.find("activation checkpointing"), std::string::npos) << tried;
    }
}

TEST(OomContext, ExpandableSegmentsSetForTheRunAreToldFromPyTorchsHint) {
    const std::string message =
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a "
        "total capacity of 7.79 GiB of which 3.19 MiB is free. Of the allocated memory 7.07 GiB "
        "is allocated by PyTorch, and 93.33 MiB is reserved by PyTorch but unallocated. If "
        "reserved but unallocated memory is large try setting\n"
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n";
    EXPECT_FALSE(read(message).expandable_set) << "the hint, wrapped onto a line of its own";
    EXPECT_FALSE(read("How do I set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True?\n" + message)
                     .expandable_set);
    EXPECT_TRUE(
        read("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n" + message).expandable_set);
    EXPECT_TRUE(
        read("$ PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True python train.py\n" + message)
            .expandable_set);
    EXPECT_TRUE(read(message + "\nos.environ[\"PYTORCH_CUDA_ALLOC_CONF\"] = "
                               "\"expandable_segments:True\"\n")
                    .expandable_set);
}

TEST(OomContext, ThdsPathsAreZeroXAndPyTorchAllocConfIsTheOneNamed) {
    const OomMessage old = read(
        "init.cu:218 WARN Cuda failure 'out of memory'\n"
        "RuntimeError: NCCL error in: /pytorch/torch/lib/THD/base/data_channels/"
        "DataChannelNccl.cpp:324, internal error\n");
    EXPECT_TRUE(old.pytorch_0x);
    EXPECT_TRUE(old.before_settings);
    const OomMessage named = read(
        "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 8.54 GiB. GPU 0 has a "
        "total capacity of 15.92 GiB of which 0 bytes is free. Of the allocated memory 3.97 GiB "
        "is allocated by PyTorch, and 9.27 GiB is reserved by PyTorch but unallocated. If "
        "reserved but unallocated memory is large try setting "
        "PYTORCH_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n");
    EXPECT_TRUE(named.generic_alloc_conf);
    EXPECT_FALSE(named.pytorch_0x);
}

}  // namespace
}  // namespace oomlab
