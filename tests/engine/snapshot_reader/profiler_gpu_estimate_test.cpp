// The GPU estimate of a CPU profile where the CPU's kernels differ from a GPU's: attention (the
// CPU's math kernel, forward and backward), dropout, sums, cuDNN's LSTMs and GRUs and its
// convolutions, cuBLAS's workspaces, each made from a trace written here in the shape
// torch.profiler writes with shapes recorded.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include <nlohmann/json.hpp>

#include "oomlab/allocator/cublas_workspaces.h"
#include "oomlab/allocator/cudnn_conv.h"
#include "oomlab/allocator/cudnn_rnn.h"
#include "oomlab/snapshot_reader/snapshot_gpu_estimate.h"
#include "oomlab/snapshot_reader/snapshot_report.h"
#include "profiler_trace_json.h"

namespace oomlab {
namespace {

using test::device_of;
using test::Json;
using test::memory;
using test::span;

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

// An op span carrying its "Sequence number", which its backward's autograd node carries too.
Json with_sequence(Json op, std::int64_t sequence) {
    op["args"]["Sequence number"] = sequence;
    return op;
}

// Its backward too, where the profile tells it (the attention's ops' sequence numbers on
// backward's autograd nodes) and recorded the query's shape (64 KiB): of what the CPU's
// backward made, the gradient of the weights (128 KiB, length x length) leaves, the query's and
// key's stay, and the fused kernel's own buffers (1.53 times the query, fp32) come beside them
// and beside the output and log-sum-exp it kept.
TEST(ProfilerTrace, TheCpusAttentionBackwardIsTheFusedKernelsWhereItWasRecorded) {
    const std::int64_t k = 1024;
    Json attention =
        with_sequence(span("aten::_scaled_dot_product_attention_math", "cpu_op", 100, 100), 25);
    attention["args"]["Input Dims"] = {
        {2, 4, 64, 32}, {2, 4, 64, 32}, {2, 4, 64, 32}, Json::array()};
    attention["args"]["Input type"] = {"float", "float", "float", ""};
    const Json events = {
        attention,
        with_sequence(span("aten::_safe_softmax", "cpu_op", 120, 20), 26),
        memory(130, 0x10, 128 * k, 128 * k),  // the weights, kept for backward
        memory(150, 0x30, 64 * k, 192 * k),   // the output
        with_sequence(
            span("autograd::engine::evaluate_function: SafeSoftmaxBackward0", "cpu_op", 300, 50),
            26),
        memory(310, 0x40, 128 * k, 320 * k),  // the weights' gradient
        memory(320, 0x10, -128 * k, 192 * k),
        with_sequence(span("autograd::engine::evaluate_function: BmmBackward0", "cpu_op", 360, 50),
                      25),
        memory(370, 0x50, 64 * k, 256 * k),  // the query's gradient
        memory(380, 0x60, 64 * k, 320 * k),  // the key's
        memory(390, 0x40, -128 * k, 192 * k),
        memory(500, 0x30, -64 * k, 128 * k),
        memory(510, 0x50, -64 * k, 64 * k),
        memory(520, 0x60, -64 * k, 0)};
    const SnapshotDevice device = device_of(events);
    EXPECT_EQ(device.peak_allocated, 320 * k);
    ASSERT_EQ(device.attention_calls.size(), 1u);
    EXPECT_EQ(device.attention_calls[0].query_bytes, 64 * k);
    EXPECT_EQ(device.attention_calls[0].backward_allocations.size(), 3u);
    const std::optional<GpuEstimate> estimate = gpu_estimate(device);
    ASSERT_TRUE(estimate);
    EXPECT_EQ(estimate->attention_fused, 1u);
    EXPECT_EQ(estimate->attention_backward_fused, 1u);
    const auto block = [](std::int64_t bytes) { return (bytes + 511) / 512 * 512; };
    const std::int64_t logsumexp = 2 * 4 * 64 * 4;  // a float for each of the query's rows
    EXPECT_EQ(device.attention_calls[0].logsumexp_bytes, logsumexp);
    EXPECT_EQ(estimate->gpu_peak_allocated - estimate->cublas_workspaces,
              3 * 64 * k + logsumexp + block(std::llround(1.53 * 64 * k)));

    // A profile without sequence numbers does not tell its backward apart: left as the CPU
    // made it.
    Json unnumbered = events;
    for (Json& event : unnumbered) {
        if (event.contains("args")) {
            event["args"].erase("Sequence number");
        }
    }
    const std::optional<GpuEstimate> unchanged = gpu_estimate(device_of(unnumbered));
    ASSERT_TRUE(unchanged);
    EXPECT_EQ(unchanged->attention_backward_fused, 0u);
    EXPECT_EQ(unchanged->gpu_peak_allocated - unchanged->cublas_workspaces,
              64 * k + logsumexp + 128 * k + 2 * 64 * k);
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
    const SnapshotDevice device = device_of(events);
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

    // A buffer the CPU's forward kept for itself and freed before backward (4 KiB, freed before
    // the loss): backward's workspaces come with that freeing, before the loss's gradient
    // (16 KiB); where the profile numbers the call's ops and their autograd nodes, at the first
    // allocation of those nodes, beside the loss's gradient, as the GPU makes them.
    Json later = events;
    later.insert(later.begin() + 7, memory(165, 0x70, 4 * k, 78 * k));
    later.insert(later.begin() + 8, memory(250, 0x70, -4 * k, 74 * k));
    later.insert(later.begin() + 9, memory(290, 0x80, 16 * k, 90 * k));  // the loss's gradient
    later.push_back(memory(400, 0x80, -16 * k, 0));
    const auto peak_of = [](const Json& trace) {
        const std::optional<GpuEstimate> made = gpu_estimate(device_of(trace));
        return made ? made->gpu_peak_allocated - made->cublas_workspaces : 0;
    };
    const std::int64_t beside_outputs = 10 * k + block(cudnn.reserve) + 8 * k;
    EXPECT_EQ(peak_of(later), beside_outputs + block(cudnn.workspace));
    later[0] = with_sequence(later[0], 40);
    later[10] = with_sequence(later[10], 40);
    EXPECT_EQ(device_of(later).recurrent_calls[0].first_backward, 9u);
    EXPECT_EQ(peak_of(later), beside_outputs + 16 * k + block(cudnn.workspace));

    // A trace that ends before backward (a program stopped by an out-of-memory error, say)
    // still holds the reserve at its end, beside forward's copy and workspace at their peak.
    const Json before_backward(events.begin(), events.begin() + 7);
    const std::optional<GpuEstimate> forward_only = gpu_estimate(device_of(before_backward));
    ASSERT_TRUE(forward_only);
    EXPECT_EQ(forward_only->gpu_peak_allocated - forward_only->cublas_workspaces,
              10 * k + 2 * k + block(cudnn.workspace) + block(cudnn.reserve));

    // Before PyTorch 2.1 a profile recorded no scalars: the call's directions and layers are not
    // known, and it is left as the CPU made it.
    Json old = events;
    old[0] = lstm_call(100, 100, false);
    EXPECT_TRUE(device_of(old).recurrent_calls.empty());
    // Nor are sizes no program runs (a damaged file's), whose buffers 64 bits would not hold.
    Json damaged = events;
    damaged[0]["args"]["Input Dims"][0] = {4, std::int64_t{1} << 40, 16};
    EXPECT_TRUE(device_of(damaged).recurrent_calls.empty());
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
    const SnapshotDevice device = device_of(events);
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
    EXPECT_FALSE(device_of(first_layer).convolution_calls[1].input_gradient);
    Json damaged = events;
    damaged[0]["args"]["Input Dims"][1] = {8, 16, std::int64_t{1} << 40, 3};
    EXPECT_EQ(device_of(damaged).convolution_calls.size(), 1u);
}

// A dropout in training as the profiler records it with shapes: (input [4, 256], p, train).
Json dropout_call(const char* p, const char* train) {
    Json call = span("aten::dropout", "cpu_op", 100, 20);
    call["args"] = {{"Input Dims", {{4, 256}, Json::array(), Json::array()}},
                    {"Concrete Inputs", {"", p, train}},
                    {"Input type", {"float", "Scalar", "Scalar"}}};
    return call;
}

// CUDA's dropout keeps a mask of a byte an element for backward, where the CPU's keeps its noise
// in the input's type: 1 KiB in place of 4 KiB, beside the output.
TEST(ProfilerTrace, ADropoutKeepsCudasMaskOfAByteAnElement) {
    const std::int64_t k = 1024;
    const Json events = {dropout_call("0.1", "True"),
                         memory(105, 0x10, 4 * k, 4 * k),  // the noise, kept for backward
                         memory(110, 0x20, 4 * k, 8 * k),  // the output
                         memory(300, 0x10, -4 * k, 4 * k), memory(310, 0x20, -4 * k, 0)};
    const SnapshotDevice device = device_of(events);
    ASSERT_EQ(device.dropout_masks.size(), 1u);
    EXPECT_EQ(device.dropout_masks[0].event, 0u);
    EXPECT_EQ(device.dropout_masks[0].mask_bytes, 1 * k);
    const std::optional<GpuEstimate> estimate = gpu_estimate(device);
    ASSERT_TRUE(estimate);
    EXPECT_EQ(estimate->dropouts_as_masks, 1u);
    EXPECT_EQ(estimate->gpu_peak_allocated - estimate->cublas_workspaces, 5 * k);

    // In evaluation, or with p of 0 or 1, no noise is made: nothing to change.
    for (const auto& [p, train] : {std::pair{"0.1", "False"}, {"0.", "True"}, {"1.", "True"}}) {
        Json other = events;
        other[0] = dropout_call(p, train);
        EXPECT_TRUE(device_of(other).dropout_masks.empty()) << p << " " << train;
    }
}

// cuBLAS's workspaces are taken at each thread's first matrix product (the program's in
// forward, with cuBLASLt's, autograd's in backward), so a batch made and freed before the model
// first ran is never beside them; where the profile names no product, they are taken at the
// start.
TEST(ProfilerTrace, CublasWorkspacesAreTakenAtEachThreadsFirstMatrixProduct) {
    const std::int64_t m = 1 << 20;
    const Json events = {
        memory(10, 0x10, 64 * m, 64 * m),  // a batch, made and freed
        memory(20, 0x10, -64 * m, 0),
        span("aten::addmm", "cpu_op", 30, 10),
        memory(35, 0x20, 1 * m, 1 * m),
        span("autograd::engine::evaluate_function: AddmmBackward0", "cpu_op", 50, 20),
        span("aten::mm", "cpu_op", 55, 10),
        memory(60, 0x30, 1 * m, 2 * m),
        memory(80, 0x20, -1 * m, 1 * m),
        memory(90, 0x30, -1 * m, 0)};
    const SnapshotDevice device = device_of(events);
    EXPECT_EQ(device.first_matrix_product, 2u);
    EXPECT_EQ(device.first_backward_matrix_product, 3u);
    const allocator::CublasWorkspaces sizes = allocator::cublas_workspaces();
    const std::int64_t workspaces = 2 * sizes.per_handle + sizes.cublas_lt;
    const std::optional<GpuEstimate> estimate = gpu_estimate(device);
    ASSERT_TRUE(estimate);
    EXPECT_EQ(estimate->cublas_workspaces, workspaces);
    EXPECT_EQ(estimate->gpu_peak_allocated, std::max(64 * m, 2 * m + workspaces));

    Json unnamed;
    for (const Json& event : events) {
        if (event["name"] == "[memory]") {
            unnamed.push_back(event);
        }
    }
    const std::optional<GpuEstimate> at_start = gpu_estimate(device_of(unnamed));
    ASSERT_TRUE(at_start);
    EXPECT_EQ(at_start->gpu_peak_allocated, 64 * m + sizes.per_handle + sizes.cublas_lt);
}

// A bias's gradient, the output's gradient [3072, 256] summed over its rows, as the profiler
// records the sum with shapes.
Json bias_gradient_sum(double start, const char* dims_summed) {
    Json call = span("aten::sum", "cpu_op", start, 10);
    call["args"] = {{"Input Dims", {{3072, 256}, Json::array(), Json::array(), Json::array()}},
                    {"Concrete Inputs", {"", dims_summed, "True", ""}},
                    {"Input type", {"float", "ScalarList", "Scalar", ""}}};
    return call;
}

// CUDA's reduction kernel stages the partial sums of a sum over many rows in a buffer of its
// own, made and freed after the sum's output (6 MiB here, what an H200 took for this shape);
// not for a sum over other dimensions, nor one inside a call cuDNN runs.
TEST(ProfilerTrace, ALongSumTakesTheReductionKernelsBufferOnCuda) {
    const std::int64_t k = 1024;
    const Json events = {
        span("autograd::engine::evaluate_function: AddmmBackward0", "cpu_op", 100, 50),
        bias_gradient_sum(110, "[0]"), memory(115, 0x10, 1 * k, 1 * k),  // the bias's gradient
        memory(200, 0x10, -1 * k, 0)};
    const SnapshotDevice device = device_of(events);
    ASSERT_EQ(device.reduction_buffers.size(), 1u);
    EXPECT_EQ(device.reduction_buffers[0], (std::pair<std::size_t, std::int64_t>{1, 6291456}));
    const std::optional<GpuEstimate> estimate = gpu_estimate(device);
    ASSERT_TRUE(estimate);
    EXPECT_EQ(estimate->sums_with_buffers, 1u);
    EXPECT_EQ(estimate->gpu_peak_allocated - estimate->cublas_workspaces, 1 * k + 6291456);

    Json over_columns = events;
    over_columns[1] = bias_gradient_sum(110, "[1]");
    EXPECT_TRUE(device_of(over_columns).reduction_buffers.empty());
    Json in_an_lstm = events;
    in_an_lstm[0] = lstm_call(100, 50, true);
    EXPECT_TRUE(device_of(in_an_lstm).reduction_buffers.empty());
}

}  // namespace
}  // namespace oomlab
