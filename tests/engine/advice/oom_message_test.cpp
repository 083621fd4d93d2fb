// Reading the out-of-memory messages PyTorch prints, in each wording (2.x, 2.1's spelling,
// 1.x, a memory fraction, the CPU's allocator, MPS), and what the figures say.
#include "oomlab/advice/oom_message.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "oomlab/common/errors.h"

namespace oomlab {
namespace {

constexpr std::int64_t kMiB = 1 << 20;
constexpr std::int64_t kGiB = std::int64_t(1) << 30;

std::int64_t gib(double value) {
    return static_cast<std::int64_t>(std::llround(value * double(kGiB)));
}
std::int64_t mib(double value) {
    return static_cast<std::int64_t>(std::llround(value * double(kMiB)));
}

// PyTorch 2.x, inside a traceback: the request, the device, PyTorch's part, every process.
TEST(OomMessage, ReadsPyTorch2sFiguresOutOfATraceback) {
    const OomExplanation e = explain_oom_message(
        "Traceback (most recent call last):\n  File \"train.py\", line 41, in <module>\n"
        "    loss.backward()\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 1 has a "
        "total capacity of 23.64 GiB of which 301.44 MiB is free. Process 811 has 14.02 GiB "
        "memory in use. Process 907 has 9.31 GiB memory in use. Of the allocated memory 8.70 "
        "GiB is allocated by PyTorch, and 112.25 MiB is reserved by PyTorch but unallocated. If "
        "reserved but unallocated memory is large try setting "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n");
    const OomMessage& m = e.message;
    EXPECT_EQ(m.device, OomMessage::Device::Cuda);
    EXPECT_EQ(m.pytorch_major, 2);
    EXPECT_EQ(m.device_index, 1);
    EXPECT_EQ(m.requested, 512 * kMiB);
    EXPECT_EQ(m.total, gib(23.64));
    EXPECT_EQ(m.free, mib(301.44));
    EXPECT_EQ(m.allocated, gib(8.70));
    EXPECT_EQ(m.reserved, gib(8.70) + mib(112.25));
    ASSERT_EQ(m.processes.size(), 2u);
    EXPECT_EQ(m.processes[0], std::make_pair(811, gib(14.02)));
    EXPECT_EQ(m.processes[1], std::make_pair(907, gib(9.31)));
    // 23.64 - 0.29 free - 8.81 PyTorch's: 14.5 GiB held elsewhere (process 811).
    EXPECT_EQ(e.verdict, OomVerdict::HeldElsewhere) << e.summary;
    EXPECT_NE(e.tries.front().find("nvidia-smi"), std::string::npos);
}

TEST(OomMessage, CachedButFreeMemoryLargerThanTheRequestIsFragmentation) {
    const OomExplanation e = explain_oom_message(
        "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacty of 79.14 "
        "GiB of which 3.56 MiB is free. Including non-PyTorch memory, this process has 79.13 GiB "
        "memory in use. Of the allocated memory 75.02 GiB is allocated by PyTorch, and 3.68 GiB "
        "is reserved by PyTorch but unallocated.");
    EXPECT_EQ(e.message.total, gib(79.14)) << "PyTorch 2.1 spelled it \"capacty\"";
    EXPECT_EQ(e.message.this_process, gib(79.13));
    EXPECT_EQ(e.verdict, OomVerdict::Fragmentation) << e.summary;
    EXPECT_NE(e.summary.find("3.68 GiB cached but free"), std::string::npos) << e.summary;
    EXPECT_NE(e.tries.front().find("expandable_segments:True"), std::string::npos);
    for (const std::string& step : e.tries) {
        EXPECT_EQ(step.find("max_split_size_mb"), std::string::npos) << "a PyTorch 1.x setting";
    }
}

TEST(OomMessage, ReadsPyTorch1sWordingAndAMemoryFraction) {
    const OomExplanation e = explain_oom_message(
        "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.78 GiB total "
        "capacity; 9.20 GiB already allocated; 5.10 GiB free; 10.00 GiB allowed; 9.50 GiB "
        "reserved in total by PyTorch) If reserved memory is >> allocated memory try setting "
        "max_split_size_mb to avoid fragmentation.");
    const OomMessage& m = e.message;
    EXPECT_EQ(m.pytorch_major, 1);
    EXPECT_EQ(m.requested, 2 * kGiB);
    EXPECT_EQ(m.total, gib(15.78));
    EXPECT_EQ(m.allocated, gib(9.20));
    EXPECT_EQ(m.free, gib(5.10));
    EXPECT_EQ(m.allowed, 10 * kGiB);
    EXPECT_EQ(m.reserved, gib(9.50));
    // 0.3 GiB cached: not the 2 GiB asked. The live tensors fill the 10 GiB allowed.
    EXPECT_EQ(e.verdict, OomVerdict::OutOfMemory) << e.summary;
    EXPECT_NE(e.summary.find("9.20 GiB"), std::string::npos) << e.summary;
}

TEST(OomMessage, ARequestLargerThanTheDeviceIsTooLarge) {
    const OomExplanation e = explain_oom_message(
        "CUDA out of memory. Tried to allocate 96.00 GiB. GPU 0 has a total capacity of 79.14 "
        "GiB of which 70.00 GiB is free. Of the allocated memory 8.00 GiB is allocated by "
        "PyTorch, and 1.00 GiB is reserved by PyTorch but unallocated.");
    EXPECT_EQ(e.verdict, OomVerdict::TooLarge) << e.summary;
}

TEST(OomMessage, ReadsTheCpusAllocatorAndMps) {
    const OomExplanation cpu = explain_oom_message(
        "RuntimeError: [enforce fail at alloc_cpu.cpp:83] err == 0. DefaultCPUAllocator: can't "
        "allocate memory: you tried to allocate 34359738368 bytes. Error code 12 (Cannot "
        "allocate memory)");
    EXPECT_EQ(cpu.message.device, OomMessage::Device::Cpu);
    EXPECT_EQ(cpu.message.requested, 32 * kGiB);
    EXPECT_EQ(cpu.message.system_error, "Cannot allocate memory");
    EXPECT_EQ(cpu.verdict, OomVerdict::OutOfMemory);
    const OomExplanation huge = explain_oom_message(
        "DefaultCPUAllocator: not enough memory: you tried to allocate 18446744073709551 "
        "bytes.");
    EXPECT_EQ(huge.verdict, OomVerdict::TooLarge) << "a size computed wrong";
    const OomExplanation mps = explain_oom_message(
        "RuntimeError: MPS backend out of memory (MPS allocated: 17.64 GB, other allocations: "
        "384.00 KB, max allowed: 18.13 GB). Tried to allocate 1.00 GB on private pool.");
    EXPECT_EQ(mps.message.device, OomMessage::Device::Mps);
    EXPECT_EQ(mps.message.allocated, gib(17.64));
    EXPECT_EQ(mps.message.allowed, gib(18.13));
    EXPECT_EQ(mps.message.requested, kGiB);
    const OomExplanation bad_alloc = explain_oom_message("terminate: std::bad_alloc");
    EXPECT_EQ(bad_alloc.message.device, OomMessage::Device::Cpu);
}

TEST(OomMessage, TextWithoutOneIsRefused) {
    EXPECT_THROW(explain_oom_message(""), BadInput);
    EXPECT_THROW(explain_oom_message("RuntimeError: shape mismatch"), BadInput);
    EXPECT_THROW(explain_oom_message(std::string(4 << 20, 'x') + "CUDA out of memory."), BadInput)
        << "read only in the first megabyte";
}

TEST(OomMessage, TheJsonHoldsTheVerdictAndEveryFigure) {
    const nlohmann::json json = nlohmann::json::parse(oom_explanation_json(explain_oom_message(
        "CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.93 GiB total capacity; 6.90 "
        "GiB already allocated; 8.06 MiB free; 7.60 GiB reserved in total by PyTorch)")));
    EXPECT_EQ(json["verdict"], "fragmentation");
    EXPECT_EQ(json["requested_bytes"], 20 * kMiB);
    EXPECT_EQ(json["reserved_bytes"], gib(7.60));
    EXPECT_TRUE(json["allowed_bytes"].is_null());
    EXPECT_FALSE(json["tries"].empty());
}

}  // namespace
}  // namespace oomlab
