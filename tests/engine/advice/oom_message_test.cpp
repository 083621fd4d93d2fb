// Reading the out-of-memory messages PyTorch prints, in each wording (2.x, 2.1's spelling,
// 1.x, a memory fraction, the CPU's allocator, MPS), and what the figures say; then hostile
// text: numbers of thousands of digits, figures out of range, logs of megabytes holding several
// messages.
#include "oomlab/advice/oom_message.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <regex>

#include <nlohmann/json.hpp>

#include "oomlab/common/errors.h"
#include "test_support.h"

namespace oomlab {
namespace {

using test::kMiB;
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
    // 5.10 GiB free on the GPU, but 9.50 GiB held of the 10 GiB allowed: the limit leads.
    EXPECT_EQ(e.verdict, OomVerdict::LimitReached) << e.summary;
    EXPECT_NE(e.summary.find("9.50 GiB of the 10.00 GiB it may use"), std::string::npos)
        << e.summary;
    EXPECT_NE(e.tries.at(0).find("set_per_process_memory_fraction"), std::string::npos);
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

// A message copied from its figures on (a console's last line): 1.x's parenthesis and 2.x's
// capacity sentence are read from the device's name, which names the backend; a sentence that
// speaks of a GPU's capacity is no message, and the figures inside a whole message are its own.
TEST(OomMessage, AMessageCopiedFromItsFiguresOnIsRead) {
    const OomExplanation parenthesis = explain_oom_message(
        "(GPU 1; 7.93 GiB total capacity; 6.90 GiB already allocated; 8.06 MiB free; 7.60 GiB "
        "reserved in total by PyTorch)");
    EXPECT_EQ(parenthesis.message.backend, "CUDA");
    EXPECT_EQ(parenthesis.message.device_index, 1);
    EXPECT_EQ(parenthesis.message.total, gib(7.93));
    EXPECT_EQ(parenthesis.message.reserved, gib(7.60));
    EXPECT_FALSE(parenthesis.message.requested);
    const OomExplanation npu = explain_oom_message(
        "log: (NPU 3; 60.97 GiB total capacity; 57.30 GiB already allocated; 57.30 GiB current "
        "active; 1.19 GiB free; 58.72 GiB reserved in total by PyTorch)");
    EXPECT_EQ(npu.message.backend, "NPU");
    EXPECT_EQ(npu.message.device_index, 3);
    const OomExplanation tail = explain_oom_message(
        "GPU 5 has a total capacity of 79.15 GiB of which 7.25 MiB is free. Of the allocated "
        "memory 77.60 GiB is allocated by PyTorch, and 1.01 GiB is reserved by PyTorch but "
        "unallocated.");
    EXPECT_EQ(tail.message.device_index, 5);
    EXPECT_EQ(tail.message.free, mib(7.25));
    EXPECT_EQ(tail.message.allocated, gib(77.60));
    EXPECT_THROW(explain_oom_message("my GPU has a total capacity of 8 GiB; is it enough?"),
                 BadInput);
    const OomExplanation whole = explain_oom_message(
        "Tried to allocate 20.00 MiB (GPU 0; 1.96 GiB total capacity; 1.24 GiB already "
        "allocated; 2.88 MiB free; 1.25 GiB reserved in total by PyTorch)");
    EXPECT_EQ(whole.message.requested, 20 * kMiB);
}

TEST(OomMessage, TextWithoutOneIsRefused) {
    EXPECT_THROW(explain_oom_message(""), BadInput);
    EXPECT_THROW(explain_oom_message("RuntimeError: shape mismatch"), BadInput);
    OomLogReader reader;
    reader.feed(std::string(3 << 20, 'x'));
    try {
        reader.explain();
        FAIL() << "no message in the text";
    } catch (const BadInput& error) {
        EXPECT_NE(std::string(error.what()).find("(3145728 bytes)"), std::string::npos)
            << error.what();
    }
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
    EXPECT_EQ(json["device"], "cuda");
    EXPECT_EQ(json["backend"], "CUDA");
}

// A message cut before its request: the verdict stays out of memory, and a cache that could
// have held a segment is said to leave fragmentation open, with its setting; none is said
// where nothing was cached.
TEST(OomMessage, WithoutTheRequestACacheLeavesFragmentationOpen) {
    const auto explained = [](const std::string& unallocated) {
        return explain_oom_message(
            "torch.OutOfMemoryError: CUDA out of memory. GPU 0 has a total capacity of 79.15 GiB "
            "of which 7.25 MiB is free. Of the allocated memory 77.60 GiB is allocated by "
            "PyTorch, and " +
            unallocated + " is reserved by PyTorch but unallocated.");
    };
    const OomExplanation cached = explained("1.01 GiB");
    EXPECT_EQ(cached.verdict, OomVerdict::OutOfMemory);
    EXPECT_FALSE(cached.message.requested);
    const auto said = [](const std::vector<std::string>& lines, const std::string& words) {
        return std::any_of(lines.begin(), lines.end(), [&](const std::string& line) {
            return line.find(words) != std::string::npos;
        });
    };
    EXPECT_TRUE(said(cached.facts, "had it been under the 1.01 GiB cached but free"));
    EXPECT_TRUE(said(cached.tries, "expandable_segments:True"));
    const OomExplanation none = explained("0 bytes");
    EXPECT_FALSE(said(none.facts, "had it been under"));
    EXPECT_FALSE(said(none.tries, "expandable_segments"));
}

// `device` is the torch.device type the program used: "cuda" for ROCm's HIP too, "xpu" and
// "npu" for Intel's and Ascend's backends, whose messages name them.
TEST(OomMessage, TheJsonNamesTheTorchDeviceTypeOfEachBackend) {
    const auto device_of = [](const std::string& message) {
        const nlohmann::json json =
            nlohmann::json::parse(oom_explanation_json(explain_oom_message(message)));
        return json["backend"].get<std::string>() + " " + json["device"].get<std::string>();
    };
    EXPECT_EQ(device_of("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. "
                        "GPU 0 has a total capacity of 63.98 GiB of which 1.50 GiB is free."),
              "HIP cuda");
    EXPECT_EQ(device_of("RuntimeError: XPU out of memory. Tried to allocate 1.71 GiB (GPU 0; "
                        "15.56 GiB total capacity; 176.00 MiB already allocated; 176.00 MiB "
                        "reserved in total by PyTorch)"),
              "XPU xpu");
    EXPECT_EQ(device_of("RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 3; "
                        "60.97 GiB total capacity; 57.30 GiB already allocated; 57.30 GiB current "
                        "active; 1.19 GiB free; 58.72 GiB reserved in total by PyTorch)"),
              "NPU npu");
    EXPECT_EQ(device_of("RuntimeError: MPS backend out of memory (MPS allocated: 17.95 GB, other "
                        "allocations: 384.00 KB, max allowed: 18.13 GB). Tried to allocate "
                        "256.00 MB on private pool."),
              "MPS mps");
}

// vLLM's message under CUDA graphs: what private pools hold is said; the one process the
// driver lists, holding what PyTorch reserved and a context more, is this one seen from a
// container (its id is not the process's own), not another program.
TEST(OomMessage, PrivatePoolsAndThisProcessSeenFromAContainer) {
    const OomExplanation e = explain_oom_message(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 546.00 MiB. GPU 0 has a "
        "total capacity of 15.77 GiB of which 514.19 MiB is free. Process 562167 has 15.25 GiB "
        "memory in use. Of the allocated memory 13.73 GiB is allocated by PyTorch, with 46.00 MiB "
        "allocated in private pools (e.g., CUDA Graphs), and 736.86 MiB is reserved by PyTorch "
        "but unallocated.");
    EXPECT_EQ(e.message.private_pools, 46 * kMiB);
    std::string facts;
    for (const std::string& fact : e.facts) {
        facts += fact + "\n";
    }
    // PyTorch prints its private pools' free blocks among what is allocated (c10's
    // CUDACachingAllocator adds them): the tensors held that much less.
    EXPECT_NE(facts.find("PyTorch's tensors held about 13.69 GiB;"), std::string::npos) << facts;
    EXPECT_NE(facts.find("46.00 MiB of the 13.73 GiB printed as allocated was free blocks kept "
                         "in private pools"),
              std::string::npos)
        << facts;
    EXPECT_NE(facts.find("process 562167 is most likely this one"), std::string::npos) << facts;
    // Two processes, or one holding far more than PyTorch reserved: others, as they say.
    const OomExplanation other = explain_oom_message(
        "CUDA out of memory. Tried to allocate 26.00 MiB. GPU 0 has a total capacity of 11.66 GiB "
        "of which 9.81 MiB is free. Process 1493972 has 1.28 GiB memory in use. Of the allocated "
        "memory 9.30 GiB is allocated by PyTorch, and 163.19 MiB is reserved by PyTorch but "
        "unallocated.");
    for (const std::string& fact : other.facts) {
        EXPECT_EQ(fact.find("most likely this one"), std::string::npos) << fact;
    }
}

// --- Hostile text --------------------------------------------------------------------------

// The what() of the BadInput `text` gives; "" when it explains.
std::string refusal(const std::string& text) {
    try {
        explain_oom_message(text);
    } catch (const BadInput& error) {
        return error.what();
    }
    return "";
}

const std::string kCuda2 =
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total "
    "capacity of 79.14 GiB of which 3.56 MiB is free. Of the allocated memory 75.02 GiB is "
    "allocated by PyTorch, and 3.68 GiB is reserved by PyTorch but unallocated.";
const std::string kCuda1 =
    "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.93 GiB total "
    "capacity; 6.90 GiB already allocated; 8.06 MiB free; 7.60 GiB reserved in total by "
    "PyTorch)";

// std::regex recursed once per digit: 30,000 digits overflowed the stack, 5,000 took 45 s. A
// number that long in any figure's place is refused, naming the figure; elsewhere it is text.
TEST(OomMessage, ANumberOfThousandsOfDigitsIsRefusedAtOnce) {
    const std::string digits(30000, '9');
    const auto started = std::chrono::steady_clock::now();
    const std::vector<std::pair<std::string, std::string>> places = {
        {"CUDA out of memory. Tried to allocate " + digits + " GiB", "the size asked for"},
        {"CUDA out of memory. GPU 0 has a total capacity of " + digits + " GiB",
         "the GPU's total capacity"},
        {"CUDA out of memory. (GPU 0; " + digits + " GiB total capacity;", "total capacity"},
        {"CUDA out of memory. of which " + digits + " MiB is free", "the free memory"},
        {"CUDA out of memory. (GPU 0; 1 GiB total capacity; " + digits + " MiB free)",
         "the free memory"},
        {"CUDA out of memory. " + digits + " GiB is allocated by PyTorch", "allocated"},
        {"CUDA out of memory. " + digits + " GiB reserved in total by PyTorch", "reserved"},
        {"CUDA out of memory. " + digits + " GiB allowed;", "allowed"},
        {"CUDA out of memory. Process 7 has " + digits + " GiB memory in use.", "process"},
        {"DefaultCPUAllocator: can't allocate memory: you tried to allocate " + digits + " bytes",
         "the size asked for"},
        {"MPS backend out of memory (MPS allocated: " + digits + " GB)", "MPS allocated"},
    };
    for (const auto& [text, what] : places) {
        const std::string error = refusal(text);
        EXPECT_NE(error.find(what), std::string::npos) << text.substr(0, 60) << ": " << error;
        EXPECT_NE(error.find("30000 characters"), std::string::npos) << error;
        EXPECT_LT(error.size(), 400u) << "quotes the figure's start, not all of it";
    }
    // Not in a figure's place (no unit, or no words around it): text, read past in one pass.
    for (const std::string& text :
         {"CUDA out of memory. Tried to allocate " + std::string(10000, '5') + ".",
          "CUDA out of memory. " + digits + digits + " at step " + digits,
          "CUDA out of memory. GPU " + std::string(30000, '0') + "1 has a total capacity"}) {
        EXPECT_EQ(refusal(text), "") << text.substr(0, 60);
    }
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
}

// stoi, stoll and stod threw std::out_of_range (exit 1); 20 digits of PiB overflowed into a
// negative size. Each figure is now checked: one no program prints is refused naming it.
TEST(OomMessage, FiguresNoProgramPrintsAreRefusedNamingThem) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"CUDA out of memory. Tried to allocate 20.00 MiB. GPU 99999999999 has a total",
         "the GPU's number, \"99999999999\", is out of range"},
        {"CUDA out of memory. Process 99999999999 has 1.00 GiB memory in use.",
         "a process id, \"99999999999\", is out of range"},
        {"CUDA out of memory. Tried to allocate " + std::string(400, '7') + ".00 MiB.",
         "(a number of 403 characters)"},
    };
    for (const auto& [text, expected] : cases) {
        EXPECT_NE(refusal(text).find(expected), std::string::npos)
            << text.substr(0, 80) << "\n -> " << refusal(text);
    }
    // The most a message can say is still read: 1 EiB, GPU 65535, a 17-digit CPU request.
    EXPECT_EQ(explain_oom_message("CUDA out of memory. Tried to allocate 1073741824.00 GiB. GPU "
                                  "65535 has a total capacity of 80.00 GiB")
                  .verdict,
              OomVerdict::TooLarge);
}

// A size past any device (PyTorch has printed "this process has 17179869184.00 GiB memory in
// use", a counter gone below zero) is set aside and said so; the message's other figures explain.
TEST(OomMessage, AnImpossibleFigureIsSetAsideAndTheRestUsed) {
    const OomExplanation e = explain_oom_message(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
        "capacity of 23.65 GiB of which 200.00 MiB is free. Including non-PyTorch memory, this "
        "process has 17179869184.00 GiB memory in use. Of the allocated memory 20.10 GiB is "
        "allocated by PyTorch, and 1.50 GiB is reserved by PyTorch but unallocated.");
    EXPECT_FALSE(e.message.this_process);
    ASSERT_EQ(e.message.set_aside.size(), 1u);
    EXPECT_NE(e.message.set_aside[0].find("17179869184.00 GiB"), std::string::npos);
    EXPECT_EQ(e.message.requested, std::int64_t(2) << 30);
    EXPECT_EQ(e.message.allocated, std::llround(20.10 * double(1 << 30)));
    EXPECT_EQ(e.verdict, OomVerdict::OutOfMemory) << e.summary;
    EXPECT_NE(e.facts.at(0).find("set aside"), std::string::npos) << e.facts.at(0);
    // A size asked for past any machine: a size computed wrong, whatever the device.
    for (const std::string& text :
         {"DefaultCPUAllocator: can't allocate memory: you tried to allocate " +
              std::string(30, '9') + " bytes.",
          std::string("CUDA out of memory. Tried to allocate 99999999999999999999 PiB."),
          std::string("CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total "
                      "capacity of 2000000000.00 GiB")}) {
        const OomExplanation odd = explain_oom_message(text);
        ASSERT_FALSE(odd.message.set_aside.empty()) << text;
        EXPECT_NE(odd.message.set_aside[0].find("more than 1 EiB"), std::string::npos);
        if (!odd.message.requested) {
            EXPECT_EQ(odd.verdict, OomVerdict::TooLarge) << text;
            EXPECT_NE(odd.summary.find("a size computed wrong"), std::string::npos);
        } else {
            EXPECT_FALSE(odd.message.total) << "the capacity set aside";
        }
    }
}

// Neither "0 B" for a size not given nor a negative share where figures do not add up.
TEST(OomMessage, AFigureNotGivenIsSaidSoAndNoneComesOutNegative) {
    const std::regex negative(R"(-[0-9])");
    for (const char* text :
         {"CUDA out of memory.", "torch.OutOfMemoryError: CUDA out of memory. GPU 0",
          "DefaultCPUAllocator: not enough memory", "std::bad_alloc", "MPS backend out of memory",
          // More allocated than reserved; more free than the whole GPU.
          "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.78 GiB total capacity; "
          "9.20 GiB already allocated; 5.10 GiB free; 4.00 GiB reserved in total by PyTorch)",
          "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.78 GiB total capacity; "
          "1.00 GiB already allocated; 20.00 GiB free; 2.00 GiB reserved in total by PyTorch)"}) {
        const OomExplanation e = explain_oom_message(text);
        std::string all = e.summary;
        for (const std::string& fact : e.facts) {
            all += "\n" + fact;
        }
        EXPECT_FALSE(std::regex_search(all, negative)) << all;
        if (!e.message.requested) {
            EXPECT_EQ(all.find(" 0 B"), std::string::npos) << all;
            EXPECT_NE(all.find("not given"), std::string::npos) << all;
        }
    }
    const OomExplanation unknown = explain_oom_message("RuntimeError: CUDA out of memory.");
    EXPECT_EQ(unknown.verdict, OomVerdict::OutOfMemory);
    EXPECT_NE(unknown.summary.find("the next allocation (its size is not given)"),
              std::string::npos)
        << unknown.summary;
    const OomExplanation odd = explain_oom_message(
        "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.78 GiB total capacity; 9.20 "
        "GiB already allocated; 5.10 GiB free; 4.00 GiB reserved in total by PyTorch)");
    EXPECT_NE(odd.facts.at(2).find("do not add up"), std::string::npos) << odd.facts.at(2);
}

// Every figure comes from the one message explained, the last of the text: never from a line
// before it, another message, or what follows its paragraph.
TEST(OomMessage, EveryFigureComesFromTheLastMessage) {
    const OomExplanation gpu = explain_oom_message("Using GPU 3\nepoch 1\n" + kCuda2);
    EXPECT_EQ(gpu.message.device_index, 0);
    EXPECT_EQ(
        explain_oom_message("Using GPU 3\nRuntimeError: CUDA out of memory.").message.device_index,
        -1);
    // An earlier memory summary's "reserved in total" turned fragmentation into memory held
    // elsewhere.
    const OomExplanation reserved =
        explain_oom_message("step 10: 512.00 MiB reserved in total by PyTorch\n" + kCuda1);
    EXPECT_EQ(reserved.message.reserved, gib(7.60));
    EXPECT_EQ(reserved.verdict, OomVerdict::Fragmentation) << reserved.summary;
    // A CPU message before a CUDA one: its 1024 GiB was read as the CUDA request.
    const std::string cpu =
        "RuntimeError: [enforce fail at alloc_cpu.cpp:83] err == 0. DefaultCPUAllocator: can't "
        "allocate memory: you tried to allocate 1099511627776 bytes. Error code 12 (Cannot "
        "allocate memory)";
    const OomExplanation cuda_last =
        explain_oom_message(cpu + "\n\nretrying on the GPU\n" + kCuda2);
    EXPECT_EQ(cuda_last.message.device, OomMessage::Device::Cuda);
    EXPECT_EQ(cuda_last.message.requested, 20 * kMiB);
    EXPECT_EQ(cuda_last.verdict, OomVerdict::Fragmentation) << cuda_last.summary;
    const OomExplanation cpu_last = explain_oom_message(kCuda2 + "\n" + cpu);
    EXPECT_EQ(cpu_last.message.device, OomMessage::Device::Cpu);
    EXPECT_EQ(cpu_last.message.requested, 1024 * kGiB);
    // Of two CUDA messages, the second; what follows a message's paragraph is not its own.
    const OomExplanation second =
        explain_oom_message(kCuda1 + "\n" + kCuda2 +
                            "\n\nProcess 5 has 9.00 GiB memory in use. 1.00 GiB allowed; GPU 7\n"
                            "Traceback (most recent call last):\n  10.00 GiB total capacity\n");
    EXPECT_EQ(second.message.pytorch_major, 2);
    EXPECT_EQ(second.message.total, gib(79.14));
    EXPECT_TRUE(second.message.processes.empty());
    EXPECT_FALSE(second.message.allowed);
    EXPECT_EQ(second.message.device_index, 0);
    const OomExplanation traceback =
        explain_oom_message("CUDA out of memory. Traceback (most recent call last): GPU 2");
    EXPECT_EQ(traceback.message.device_index, -1);
}

// `python train.py 2>&1 | oomlab-cli explain`: the OOM at the end of megabytes of progress, read
// in pieces of any size, in a few hundred KiB.
TEST(OomLogReader, FindsTheLastMessageOfALongLogInBoundedMemory) {
    std::string progress;
    for (int step = 0; progress.size() < 1700 * 1024; ++step) {
        progress += "step " + std::to_string(step) + " loss 2.31 | 412 MiB reserved | GPU 3\n";
    }
    const auto read = [](const std::string& text, std::size_t piece) {
        OomLogReader reader;
        std::size_t most_held = 0;
        for (std::size_t at = 0; at < text.size(); at += piece) {
            reader.feed(std::string_view(text).substr(at, piece));
            most_held = std::max(most_held, reader.bytes_held());
        }
        EXPECT_LE(most_held, 600u * 1024u);
        EXPECT_EQ(reader.bytes_read(), text.size());
        return reader.explain();
    };
    for (const std::size_t piece : {std::size_t{4093}, std::size_t{65536}, std::size_t{1} << 20}) {
        const OomExplanation at_end = read(progress + kCuda2 + "\n", piece);
        EXPECT_EQ(at_end.message.requested, 20 * kMiB) << piece;
        EXPECT_EQ(at_end.message.device_index, 0) << piece;
        // A message that scrolled out of the window is kept; a later one replaces it.
        const OomExplanation first = read(kCuda1 + "\n" + progress + progress, piece);
        EXPECT_EQ(first.message.pytorch_major, 1) << piece;
        EXPECT_EQ(first.message.reserved, gib(7.60)) << piece;
        const OomExplanation later = read(kCuda1 + "\n" + progress + kCuda2 + progress, piece);
        EXPECT_EQ(later.message.pytorch_major, 2) << piece;
    }
    // A message's words split between pieces; a whole string at once, as before.
    EXPECT_EQ(read(kCuda2, 1).verdict, OomVerdict::Fragmentation);
    EXPECT_EQ(explain_oom_message(std::string(4 << 20, 'x') + kCuda2).message.requested, 20 * kMiB)
        << "the first megabyte was all that was read";
}

}  // namespace
}  // namespace oomlab
