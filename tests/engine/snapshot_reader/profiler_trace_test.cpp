// The Chrome trace of PyTorch's profiler read as a snapshot: a trace written here in the shape
// torch.profiler's export_chrome_trace writes (PyTorch 2.x), and traces that are not one. A
// trace that PyTorch itself records is read in the CLI's tests (PyTorchPrograms).
#include <gtest/gtest.h>

#include <map>

#include <nlohmann/json.hpp>

#include "oomlab/common/errors.h"
#include "oomlab/snapshot_reader/snapshot_gpu_estimate.h"
#include "oomlab/snapshot_reader/snapshot_report.h"
#include "test_support.h"

namespace oomlab {
namespace {

using Json = nlohmann::json;

Json span(const char* name, const char* category, double start, double duration) {
    return {{"ph", "X"}, {"cat", category}, {"name", name},   {"pid", 7},
            {"tid", 7},  {"ts", start},     {"dur", duration}};
}

// Bytes > 0 allocated, < 0 freed; the totals after the event, as the profiler writes them.
Json memory(double time, std::int64_t address, std::int64_t bytes, std::int64_t total) {
    return {{"ph", "i"},
            {"cat", "cpu_instant_event"},
            {"name", "[memory]"},
            {"pid", 7},
            {"tid", 7},
            {"ts", time},
            {"args",
             {{"Total Reserved", 0},
              {"Total Allocated", total},
              {"Bytes", bytes},
              {"Device Id", -1},
              {"Device Type", 0},
              {"Addr", address}}}};
}

std::string refusal(const std::string& text) {
    try {
        snapshot_report_from_bytes(text, "trace.json");
    } catch (const BadInput& error) {
        return error.what();
    }
    return {};
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

// On CUDA attention is a fused kernel that makes its output alone: what the CPU's math kernel
// made first (the scores, their softmax) is left out, whether freed inside it or kept for
// backward, and what it keeps is named as the CPU's attention.
TEST(ProfilerTrace, TheCpusAttentionWeightsAreLeftOutOnAGpu) {
    const std::int64_t m = 1 << 20;
    const Json trace = {{"traceEvents",
                         {span("aten::_scaled_dot_product_attention_math", "cpu_op", 100, 100),
                          memory(110, 0x10, 8 * m, 8 * m), memory(120, 0x20, 8 * m, 16 * m),
                          memory(130, 0x10, -8 * m, 8 * m), memory(140, 0x30, 1 * m, 9 * m),
                          span("aten::linear", "cpu_op", 300, 10), memory(305, 0x40, 2 * m, 11 * m),
                          memory(400, 0x20, -8 * m, 3 * m)}}};
    const SnapshotDevice device = snapshot_report_from_bytes(trace.dump(), "t.json").devices[0];
    EXPECT_EQ(device.peak_allocated, 16 * m);
    ASSERT_FALSE(device.at_peak_by_kind.empty());
    EXPECT_EQ(device.at_peak_by_kind.front().where, kMathAttentionKind);
    const std::optional<GpuEstimate> estimate = gpu_estimate(device);
    ASSERT_TRUE(estimate);
    EXPECT_EQ(estimate->attention_fused, 1u);
    EXPECT_EQ(estimate->gpu_peak_allocated - estimate->cublas_workspaces, 3 * m);
}

// An LSTM's call as the profiler records it with shapes (record_shapes=True, PyTorch 2.x): the
// input [B=4, T=8, I=16] batch-first, hx [2, 4, H=32] (one layer, two directions), its weights,
// then (has_biases, num_layers, dropout, train, bidirectional, batch_first).
Json lstm_call(double start, double duration, bool with_scalars) {
    Json call = span("aten::lstm", "cpu_op", start, duration);
    call["args"] = {{"Input Dims",
                     {{4, 8, 16},
                      {{2, 4, 32}, {2, 4, 32}},
                      {{128, 16}, {128, 32}, {128}, {128}},
                      Json::array(),
                      Json::array(),
                      Json::array(),
                      Json::array(),
                      Json::array(),
                      Json::array()}},
                    {"Input type", {"float", "TensorList", "TensorList", "Scalar"}}};
    if (with_scalars) {
        call["args"]["Concrete Inputs"] = {"", "", "", "True", "1", "0.", "True", "True", "True"};
    }
    return call;
}

// On CUDA an LSTM is cuDNN's: what the CPU's kernel saved for backward (64 KiB) and its
// temporaries leave, its output (8 KiB) and last states (1 KiB each) stay, and cuDNN's reserve
// (from forward to the end of backward) and workspaces come in: forward's beside a time-major
// copy of the batch-first input (2 KiB), each of backward's beside a copy of the output's
// gradient or of the input. The peak is backward's first: outputs, reserve, the input's
// gradient (2 KiB), the copy of the output's gradient and a workspace.
TEST(ProfilerTrace, AnLstmsCallIsMadeAsCudnnMakesItWhereItsShapesWereRecorded) {
    const std::int64_t k = 1024;
    const Json events = {
        lstm_call(100, 100, true),
        memory(110, 0x10, 64 * k, 64 * k),   // saved for backward
        memory(120, 0x20, 32 * k, 96 * k),   // a temporary
        memory(130, 0x20, -32 * k, 64 * k),  //
        memory(140, 0x30, 8 * k, 72 * k),    // the output
        memory(150, 0x40, 1 * k, 73 * k),    // hy
        memory(160, 0x50, 1 * k, 74 * k),    // cy
        span("autograd::engine::evaluate_function: MkldnnRnnLayerBackward0", "cpu_op", 300, 100),
        memory(310, 0x60, 2 * k, 76 * k),    // the input's gradient
        memory(320, 0x10, -64 * k, 12 * k),  // backward frees what forward saved
        memory(500, 0x30, -8 * k, 4 * k),
        memory(510, 0x40, -1 * k, 3 * k),
        memory(520, 0x50, -1 * k, 2 * k),
        memory(530, 0x60, -2 * k, 0)};
    const SnapshotDevice device =
        snapshot_report_from_bytes(Json{{"traceEvents", events}}.dump(), "t.json").devices[0];
    ASSERT_EQ(device.recurrent_calls.size(), 1u);
    const SnapshotRecurrentCall& call = device.recurrent_calls[0];
    EXPECT_FALSE(call.shape.gru);
    EXPECT_TRUE(call.batch_first);
    EXPECT_EQ(call.shape.layers, 1);
    EXPECT_EQ(call.shape.directions, 2);
    EXPECT_EQ(call.shape.batch, 4);
    EXPECT_EQ(call.shape.length, 8);
    EXPECT_EQ(call.shape.input, 16);
    EXPECT_EQ(call.shape.hidden, 32);
    EXPECT_EQ(call.shape.element, 4);
    EXPECT_EQ(call.allocations.size(), 5u);

    const std::optional<GpuEstimate> estimate = gpu_estimate(device);
    ASSERT_TRUE(estimate);
    EXPECT_EQ(estimate->recurrent_as_cudnn, 1u);
    const allocator::CudnnRnnBuffers cudnn = allocator::cudnn_rnn_buffers(call.shape);
    EXPECT_EQ(cudnn.reserve, 5 * 8 * k);
    const auto block = [](std::int64_t bytes) { return (bytes + 511) / 512 * 512; };
    EXPECT_EQ(estimate->gpu_peak_allocated - estimate->cublas_workspaces,
              10 * k + block(cudnn.reserve) + 2 * k + 8 * k + block(cudnn.workspace));

    // A trace that ends before backward (a program stopped by an out-of-memory error, say)
    // still holds the reserve at its end, beside forward's copy and workspace at their peak.
    const Json before_backward(events.begin(), events.begin() + 7);
    const std::optional<GpuEstimate> forward_only = gpu_estimate(
        snapshot_report_from_bytes(Json{{"traceEvents", before_backward}}.dump(), "t.json")
            .devices[0]);
    ASSERT_TRUE(forward_only);
    EXPECT_EQ(forward_only->gpu_peak_allocated - forward_only->cublas_workspaces,
              10 * k + 2 * k + block(cudnn.workspace) + block(cudnn.reserve));

    // Before PyTorch 2.1 a profile recorded no scalars: the call's directions and layers are not
    // known, and it is left as the CPU made it.
    Json old = events;
    old[0] = lstm_call(100, 100, false);
    EXPECT_TRUE(snapshot_report_from_bytes(Json{{"traceEvents", old}}.dump(), "t.json")
                    .devices[0]
                    .recurrent_calls.empty());
    // Nor are sizes no program runs (a damaged file's), whose buffers 64 bits would not hold.
    Json damaged = events;
    damaged[0]["args"]["Input Dims"][0] = {4, std::int64_t{1} << 40, 16};
    EXPECT_TRUE(snapshot_report_from_bytes(Json{{"traceEvents", damaged}}.dump(), "t.json")
                    .devices[0]
                    .recurrent_calls.empty());
}

// aten::convolution's inputs as the profiler records them with shapes: (input, weight, bias,
// stride, padding, dilation, transposed, output_padding, groups); its backward's: (grad_output,
// input, weight, bias_sizes, stride, padding, dilation, transposed, output_padding, groups,
// output_mask). A 3x3 convolution of 16 to 8 channels over 8 x 8, batch 2, padded by 1.
Json convolution_call(bool backward, double start, const char* output_mask) {
    Json call =
        span(backward ? "aten::convolution_backward" : "aten::convolution", "cpu_op", start, 100);
    Json dims = {{2, 16, 8, 8}, {8, 16, 3, 3}, {8}};
    Json scalars = {"", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1"};
    if (backward) {
        dims = {{2, 8, 8, 8}, {2, 16, 8, 8}, {8, 16, 3, 3}};
        scalars = {"",       "",      "",       "[8]", "[1, 1]",   "[1, 1]",
                   "[1, 1]", "False", "[0, 0]", "1",   output_mask};
    }
    while (dims.size() < scalars.size()) {
        dims.push_back(Json::array());
    }
    call["args"] = {{"Input Dims", dims},
                    {"Concrete Inputs", scalars},
                    {"Input type", {"float", "float", "float", "ScalarList"}}};
    return call;
}

// On CUDA a convolution is cuDNN's: the CPU's temporaries inside each call leave, the output
// (4 KiB) and the gradients (the input's 8 KiB, the weights' 4,608 bytes, the bias's 32) stay,
// and cuDNN's workspaces come in: forward's after the output, backward's after each gradient.
// The peak is the weights' workspace, beside the output and two gradients.
TEST(ProfilerTrace, AConvolutionsCallsGetCudnnsWorkspacesWhereTheirShapesWereRecorded) {
    const std::int64_t k = 1024;
    const Json events = {
        convolution_call(false, 100, ""),
        memory(110, 0x10, 4 * k, 4 * k),  // the CPU's temporary
        memory(120, 0x10, -4 * k, 0),
        memory(130, 0x20, 4 * k, 4 * k),  // the output
        span("autograd::engine::evaluate_function: ConvolutionBackward0", "cpu_op", 300, 100),
        convolution_call(true, 300, "[True, True, True]"),
        memory(310, 0x30, 8 * k, 12 * k),         // the input's gradient
        memory(320, 0x40, 16 * k, 28 * k),        // the CPU's temporary
        memory(330, 0x40, -16 * k, 12 * k),       //
        memory(340, 0x50, 4608, 12 * k + 4608),   // the weights' gradient
        memory(350, 0x60, 32, 12 * k + 4640),     // the bias's
        memory(500, 0x20, -4 * k, 8 * k + 4640),  //
        memory(510, 0x30, -8 * k, 4640),
        memory(520, 0x50, -4608, 32),
        memory(530, 0x60, -32, 0)};
    const SnapshotDevice device =
        snapshot_report_from_bytes(Json{{"traceEvents", events}}.dump(), "t.json").devices[0];
    ASSERT_EQ(device.convolution_calls.size(), 2u);
    const SnapshotConvolutionCall& forward = device.convolution_calls[0];
    EXPECT_FALSE(forward.backward);
    EXPECT_EQ(forward.shape.dims, 2);
    EXPECT_EQ(forward.shape.batch, 2);
    EXPECT_EQ(forward.shape.in_channels, 16);
    EXPECT_EQ(forward.shape.out_channels, 8);
    EXPECT_EQ(forward.shape.size[1], 8);
    EXPECT_EQ(forward.shape.kernel[1], 3);
    EXPECT_EQ(forward.shape.padding[0], 1);
    EXPECT_EQ(forward.shape.element, 4);
    EXPECT_EQ(forward.shape.output_bytes(), 4 * k);
    EXPECT_EQ(forward.allocations.size(), 2u);
    const SnapshotConvolutionCall& backward = device.convolution_calls[1];
    EXPECT_TRUE(backward.backward);
    EXPECT_TRUE(backward.input_gradient);
    EXPECT_TRUE(backward.weight_gradient);
    EXPECT_EQ(backward.allocations.size(), 4u);

    const std::optional<GpuEstimate> estimate = gpu_estimate(device);
    ASSERT_TRUE(estimate);
    EXPECT_EQ(estimate->convolutions_as_cudnn, 2u);
    const auto cudnn = allocator::cudnn_conv_workspaces(forward.shape);
    ASSERT_TRUE(cudnn);
    EXPECT_GE(cudnn->backward_weight, cudnn->backward_input);
    const auto block = [](std::int64_t bytes) { return (bytes + 511) / 512 * 512; };
    EXPECT_EQ(estimate->gpu_peak_allocated - estimate->cublas_workspaces,
              4 * k + 8 * k + block(4608) + block(cudnn->backward_weight));

    // The first layer's backward computes no input's gradient; sizes no program runs (a damaged
    // file's) are left as the CPU made them.
    Json first_layer = events;
    first_layer[5] = convolution_call(true, 300, "[False, True, True]");
    EXPECT_FALSE(snapshot_report_from_bytes(Json{{"traceEvents", first_layer}}.dump(), "t.json")
                     .devices[0]
                     .convolution_calls[1]
                     .input_gradient);
    Json damaged = events;
    damaged[0]["args"]["Input Dims"][1] = {8, 16, std::int64_t{1} << 40, 3};
    EXPECT_EQ(snapshot_report_from_bytes(Json{{"traceEvents", damaged}}.dump(), "t.json")
                  .devices[0]
                  .convolution_calls.size(),
              1u);
}

// A script's top level is "train.py(0): <module>" in the profiler's names (a module has no
// first line): said as the script's top level, not as its line 0.
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
