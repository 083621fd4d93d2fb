// The Chrome trace of PyTorch's profiler read as a snapshot: a trace written here in the shape
// torch.profiler's export_chrome_trace writes (PyTorch 2.x), and traces that are not one. A
// trace that PyTorch itself records is read in the CLI's tests (PyTorchPrograms).
#include <gtest/gtest.h>

#include <map>

#include <nlohmann/json.hpp>

#include "oomlab/common/errors.h"
#include "oomlab/snapshot_reader/snapshot_gpu_estimate.h"
#include "oomlab/snapshot_reader/snapshot_report.h"
#include "profiler_trace_json.h"
#include "test_support.h"

namespace oomlab {
namespace {

using test::Json;
using test::memory;
using test::span;

std::string refusal(const std::string& text) {
    try {
        snapshot_report_from_bytes(text, "trace.json");
    } catch (const BadInput& error) {
        return error.what();
    }
    return {};
}

// A trace before PyTorch 1.10 (no totals, no addresses) whose first event frees 4 MiB
// allocated before it: its figures count that much of the memory before the trace, no more,
// and its words say so rather than a start of nothing.
TEST(ProfilerTrace, AnOldTracesFiguresCountWhatItsFreesShowWasThereBefore) {
    const auto old_event = [](double time, std::int64_t bytes) {
        return Json{
            {"ph", "i"},  {"name", "[memory]"},
            {"pid", 7},   {"tid", 7},
            {"ts", time}, {"args", {{"Device Type", 1}, {"Device Id", 0}, {"Bytes", bytes}}}};
    };
    const SnapshotDevice device = test::device_of(
        {old_event(1, -(4 << 20)), old_event(2, 8 << 20), old_event(3, -(8 << 20))});
    EXPECT_FALSE(device.totals_recorded);
    EXPECT_EQ(device.timeline.front().allocated, 4 << 20);
    EXPECT_EQ(snapshot_end_words(device).rfind("0 B allocated at the end, the events' net sum "
                                               "over the trace and the 4.0 MiB its frees show "
                                               "was there before (",
                                               0),
              0u)
        << snapshot_end_words(device);
    EXPECT_EQ(snapshot_peak_words(device),
              "peak allocated: 8.0 MiB, counting of what was allocated before the trace began "
              "only the 4.0 MiB its frees show, after event 2 of 3");
}

// A step of a user's train.py: its forward (a linear layer) allocates 4 MiB, its backward
// 1 MiB, then the forward's output is freed and the optimizer's step allocates 2 MiB.
TEST(ProfilerTrace, MemoryEventsAreReplayedAndNamedByTheSpansAroundThem) {
    const Json trace = {
        {"schemaVersion", 1},
        {"traceEvents",
         {span("train.py(30): <module>", "python_function", 0, 1000),
          span("train.py(21): step", "python_function", 10, 900),
          span("torch/nn/modules/module.py(1783): _call_impl", "python_function", 20, 100),
          span("aten::linear", "cpu_op", 30, 50), memory(40, 100, 4 << 20, (4 << 20) + 512),
          span("autograd::engine::evaluate_function: AddmmBackward0", "cpu_op", 200, 100),
          memory(250, 200, 1 << 20, (5 << 20) + 512), memory(400, 100, -(4 << 20), (1 << 20) + 512),
          span("Optimizer.step#Adam.step", "user_annotation", 500, 100),
          memory(550, 300, 2 << 20, (3 << 20) + 512)}}};
    const SnapshotReport report = snapshot_report_from_bytes(trace.dump(), "trace.json");
    ASSERT_EQ(report.devices.size(), 1u);
    const SnapshotDevice& device = report.devices.front();
    EXPECT_EQ(device.index, -1) << "the profiler's number for the CPU";
    EXPECT_EQ(device.events, 4u);
    EXPECT_EQ(device.allocated, (3 << 20) + 512);
    // 512 bytes were allocated before the trace; the peak follows the totals.
    EXPECT_EQ(device.timeline.front().allocated, 512);
    EXPECT_EQ(device.peak_allocated, (5 << 20) + 512);
    EXPECT_EQ(device.peak_event, 2u);
    std::map<std::string, std::int64_t> kinds;
    for (const SnapshotLine& kind : device.at_peak_by_kind) {
        kinds[kind.where] = kind.bytes;
    }
    EXPECT_EQ(kinds["forward"], 4 << 20);
    EXPECT_EQ(kinds["backward"], 1 << 20);
    EXPECT_EQ(kinds[kAllocatedBeforeTrace], 512);
    // The user's line is the one that called into PyTorch, not PyTorch's own frames.
    ASSERT_FALSE(device.at_peak.empty());
    EXPECT_EQ(device.at_peak.front().where, "train.py:21 (step)");
    EXPECT_EQ(device.at_peak.front().bytes, 5 << 20);
    const SnapshotMoment end = snapshot_moment(device, device.events);
    EXPECT_EQ(end.by_kind.front().where, "optimizer step");
    EXPECT_EQ(end.allocated, device.allocated);
}

// A program's CPU requests on a GPU: 512 bytes take a 2 MiB segment of the small pool, 3 MiB a
// 20 MiB one of the large pool (requests of 1 to 10 MiB share them), as PyTorch's caching
// allocator reserves them, beside cuBLAS's workspaces (one thread's 32 MiB in a segment of its
// own, cuBLASLt's 1 MiB in a small one, whose other half takes the 512 bytes: no backward pass
// ran); a GPU's own trace gets no estimate.
TEST(ProfilerTrace, ACpuTracesRequestsAreEstimatedOnAGpu) {
    const Json trace = {
        {"traceEvents",
         {memory(10, 0x1000, 512, 512), memory(20, 0x200000, 3 << 20, (3 << 20) + 512),
          memory(30, 0x1000, -512, 3 << 20)}}};
    const SnapshotReport report = snapshot_report_from_bytes(trace.dump(), "trace.json");
    ASSERT_EQ(report.devices.size(), 1u);
    const std::optional<GpuEstimate> estimate = gpu_estimate(report.devices[0]);
    ASSERT_TRUE(estimate);
    EXPECT_EQ(estimate->peak_allocated, (3 << 20) + 512);
    EXPECT_EQ(estimate->cublas_workspaces, 33 << 20);
    EXPECT_EQ(estimate->gpu_peak_allocated, (36 << 20) + 512);
    EXPECT_EQ(estimate->peak_reserved, (20 + 32 + 2) << 20) << "512 B beside cuBLASLt's";
    EXPECT_EQ(estimate->segments_at_peak, 3);
    // Expandable segments map the large pool in pages of 20 MiB: 32 + 3 MiB in two of them.
    EXPECT_EQ(estimate->peak_reserved_expandable, (40 + 2) << 20);
    SnapshotDevice gpu = report.devices[0];
    gpu.index = 0;
    EXPECT_FALSE(gpu_estimate(gpu));
}

// The program's own annotations (record_function, the optimizer's step) are its stages, each
// with the most allocated while it ran, as a snapshot's external annotations are.
TEST(ProfilerTrace, TheProgramsAnnotationsAreItsStages) {
    const Json trace = {
        {"traceEvents",
         {span("## forward ##", "user_annotation", 0, 100), memory(10, 0x100, 4 << 20, 4 << 20),
          memory(20, 0x200, 2 << 20, 6 << 20), memory(30, 0x200, -(2 << 20), 4 << 20),
          span("Optimizer.step#Adam.step", "user_annotation", 200, 100),
          memory(210, 0x300, 1 << 20, 5 << 20), memory(220, 0x300, -(1 << 20), 4 << 20)}}};
    const SnapshotDevice device = snapshot_report_from_bytes(trace.dump(), "t.json").devices[0];
    std::map<std::string, std::int64_t> peaks;
    for (const SnapshotAnnotatedStage& stage : stages_by_peak(device)) {
        peaks[stage.name] = stage.peak_allocated;
    }
    EXPECT_EQ(peaks, (std::map<std::string, std::int64_t>{{"## forward ##", 6 << 20},
                                                          {"Optimizer.step#Adam.step", 5 << 20}}));
}

// On CUDA, Adam updates every parameter at once (foreach, PyTorch's default there): one
// temporary of each parameter's size, alive together, where the CPU made two of each (its
// sqrt and quotient), one parameter at a time. Parameters of 4 and 8 MiB: the CPU's update
// peaks at 12 + 20 MiB (the 4 MiB quotient still alive beside the 8 MiB sqrt and quotient), the
// GPU's at 12 + 4 + 8 MiB, beside cuBLAS's workspaces.
TEST(ProfilerTrace, AdamsTemporariesAreMadeTogetherOnAGpu) {
    const std::int64_t m = 1 << 20;
    const Json trace = {{"traceEvents",
                         {memory(10, 0x10, 4 * m, 4 * m), memory(11, 0x20, 8 * m, 12 * m),
                          span("Optimizer.step#Adam.step", "user_annotation", 100, 100),
                          memory(110, 0x30, 4 * m, 16 * m), memory(111, 0x40, 4 * m, 20 * m),
                          memory(112, 0x30, -4 * m, 16 * m), memory(120, 0x50, 8 * m, 24 * m),
                          memory(121, 0x60, 8 * m, 32 * m), memory(122, 0x50, -8 * m, 24 * m),
                          memory(123, 0x40, -4 * m, 20 * m), memory(130, 0x60, -8 * m, 12 * m)}}};
    const SnapshotDevice device = snapshot_report_from_bytes(trace.dump(), "t.json").devices[0];
    EXPECT_EQ(device.peak_allocated, 32 * m);
    const std::optional<GpuEstimate> estimate = gpu_estimate(device);
    ASSERT_TRUE(estimate);
    EXPECT_EQ(estimate->updates_gathered, 1u);
    EXPECT_EQ(estimate->gpu_peak_allocated - estimate->cublas_workspaces, 24 * m);
}

// A script's top level is "train.py(0): <module>" in the profiler's names (a module has no
// first line): said as the script's top level, not as its line 0.
// The innermost frame outside torch and Python's own library names the memory: a model's
// forward inside a profiler step (not the loop), a DataLoader's batch the loop that took it (not
// multiprocessing's pickling), and with modules alone recorded, the module's label.
TEST(ProfilerTrace, TheInnermostProgramFrameNamesTheMemory) {
    const Json trace = {
        {"traceEvents",
         {span("train.py(90): <module>", "python_function", 0, 1000),
          span("ProfilerStep#3", "user_annotation", 5, 900),
          span("train.py(40): main", "python_function", 6, 800),
          span("torch/nn/modules/module.py(1783): _call_impl", "python_function", 10, 100),
          span("model.py(12): forward", "python_function", 20, 80),
          span("aten::linear", "cpu_op", 30, 50), memory(40, 100, 4 << 20, 4 << 20),
          span("multiprocessing/reduction.py(58): dump", "python_function", 200, 100),
          span("aten::empty", "cpu_op", 210, 10), memory(215, 200, 2 << 20, 6 << 20),
          span("nn.Module: Head_0", "python_function", 400, 100),
          span("aten::empty", "cpu_op", 410, 10), memory(415, 300, 1 << 20, 7 << 20)}}};
    const SnapshotReport report = snapshot_report_from_bytes(trace.dump(), "trace.json");
    std::map<std::string, std::int64_t> lines;
    for (const SnapshotLine& line : report.devices.at(0).at_peak) {
        lines[line.where] = line.bytes;
    }
    EXPECT_EQ(lines["model.py:12 (forward)"], 4 << 20);
    EXPECT_EQ(lines["train.py:40 (main)"], (2 << 20) + (1 << 20))
        << "the loader's batch, and a module label inside the program's own frame";
    EXPECT_EQ(lines.count("multiprocessing/reduction.py:58 (dump)"), 0u);
}

TEST(ProfilerTrace, AScriptsTopLevelIsNamedAsSuchNotAsLineZero) {
    const Json trace = {{"traceEvents",
                         {span("train.py(0): <module>", "python_function", 0, 1000),
                          span("aten::empty", "cpu_op", 10, 10), memory(15, 100, 4096, 4096)}}};
    const SnapshotReport report = snapshot_report_from_bytes(trace.dump(), "trace.json");
    ASSERT_EQ(report.devices.size(), 1u);
    ASSERT_FALSE(report.devices[0].at_peak.empty());
    EXPECT_EQ(report.devices[0].at_peak.front().where,
              "train.py: its top level (the profiler records no line there)");
}

TEST(ProfilerTrace, WhatIsNoProfilerTraceIsNamed) {
    EXPECT_NE(refusal("{\"traceEvents\": [")
                  .find("trace.json:1: not a Chrome trace of PyTorch's "
                        "profiler (the file ends before the document "
                        "does, at byte 17)"),
              std::string::npos)
        << refusal("{\"traceEvents\": [");
    EXPECT_NE(refusal("{\"traceEvents\":\n\n [{} {}]}").find("trace.json:3: not a Chrome trace"),
              std::string::npos)
        << refusal("{\"traceEvents\":\n\n [{} {}]}");
    // A zero byte is no end of the file: said as such, in memory and read from a file.
    EXPECT_NE(refusal(std::string("[{}, \0 {}]", 10)).find("holds a zero byte"), std::string::npos);
    const test::TempDir dir;
    test::write_file(dir.file("zero.json"), "[{}," + std::string(100, ' ') + '\0' + "{}]");
    try {
        read_snapshot_report(dir.file("zero.json"));
        ADD_FAILURE() << "a zero byte was taken for the end";
    } catch (const BadInput& error) {
        EXPECT_NE(std::string(error.what())
                      .find("zero.json:1: not a Chrome trace of PyTorch's "
                            "profiler (it holds a zero byte"),
                  std::string::npos)
            << error.what();
    }
    EXPECT_NE(refusal("{\"other\": 1}").find("no \"traceEvents\" list"), std::string::npos);
    EXPECT_NE(refusal(Json{{"traceEvents", {span("aten::mm", "cpu_op", 0, 1)}}}.dump())
                  .find("without memory events; record it with "
                        "torch.profiler.profile(profile_memory=True"),
              std::string::npos);
    std::string deep;
    for (int i = 0; i < 200; ++i) {
        deep += "{\"a\": ";
    }
    EXPECT_NE(refusal(deep).find("nested more than"), std::string::npos);
    // The rules of every document hold in the trace's events too.
    EXPECT_NE(refusal(R"({"traceEvents": [{"name": "a", "name": "b"}]})")
                  .find("the key \"name\" appears twice"),
              std::string::npos);
    const std::string deep_args =
        R"({"traceEvents": [{"args": )" + std::string(70, '[') + std::string(70, ']') + "}]}";
    EXPECT_NE(refusal(deep_args).find("nested more than 64 levels"), std::string::npos);
    // Every item of the events list is an event: a list of numbers is refused at its first
    // item (3 GiB of ",0" took 194 s to be refused), whatever the item is.
    const std::string first = memory(1, 100, 64, 64).dump();
    for (const auto& [items, said] : std::map<std::string, std::string>{
             {"0,0", "item 1 of the events list is 0, not an event"},
             {first + ",\"x\"", "item 2 of the events list is the text \"x\", not an event"},
             {first + "," + first + ",[]", "item 3 of the events list is a list, not an event"},
             {"null", "item 1 of the events list is null"}}) {
        EXPECT_NE(refusal("{\"traceEvents\": [" + items + "]}").find(said), std::string::npos)
            << items << ": " << refusal("{\"traceEvents\": [" + items + "]}");
        EXPECT_NE(refusal("[" + items + "]").find(said), std::string::npos) << items;
    }
    // A list of lists is read as what writes one, export_memory_timeline's rows
    // (wild_forms_test.cpp), and refused as such where a row is not one.
    EXPECT_NE(refusal("[[-1, 1, 37632], [-1, 1, 602112, 2]]")
                  .find("row 1 of what export_memory_timeline writes holds 3 numbers"),
              std::string::npos);
}

// The trace is read in one pass, keeping only its events' fields: the order of an event's keys,
// a document that is the list itself, and what lies nested where no field is looked for do not
// change what is read.
TEST(ProfilerTrace, EventsAreReadWhateverTheirKeysOrderAndTheDocumentsShape) {
    Json reordered = memory(40, 100, 4 << 20, 4 << 20);
    reordered["args"]["nested"] = {{"Bytes", 999}, {"Addr", 1}};  // not the event's own
    const std::string args_first =
        R"({"args": {"Bytes": 1048576, "Addr": 200, "Total Allocated": 5242880,
            "Total Reserved": 0, "Device Id": -1, "Device Type": 0},
            "ts": 50, "tid": 7, "name": "[memory]", "ph": "i"})";
    const std::string as_list = "[" + reordered.dump() + "," + args_first + "]";
    const SnapshotReport report = snapshot_report_from_bytes(as_list, "trace.json");
    ASSERT_EQ(report.devices.size(), 1u);
    EXPECT_EQ(report.devices[0].events, 2u);
    EXPECT_EQ(report.devices[0].allocated, 5 << 20);
    EXPECT_EQ(report.devices[0].peak_allocated, 5 << 20);
}

}  // namespace
}  // namespace oomlab
