// What a GPU's fused attention keeps for backward where the CPU's math kernel keeps its
// weights, read from a trace written here in the shape torch.profiler writes with shapes
// recorded.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "oomlab/snapshot_reader/snapshot_gpu_estimate.h"
#include "oomlab/snapshot_reader/snapshot_report.h"
#include "profiler_trace_json.h"

namespace oomlab {
namespace {

using test::device_of;
using test::Json;
using test::memory;
using test::span;

// The fused kernel keeps for backward what the CPU's math kernel does not: its output and its
// log-sum-exp (the query's 64 KiB and a float for each of its 8 x 64 rows, in place of the CPU's
// last allocation, a temporary), the float mask the program's call made of a boolean one
// (16 KiB), and the query, key and value the program made (64 KiB each, which the CPU freed when
// the call returned); each until backward freed the weights the CPU kept.
TEST(ProfilerTrace, TheFusedAttentionKeepsItsInputsOutputAndLogSumExpForBackward) {
    const std::int64_t k = 1024;
    Json kernel = span("aten::_scaled_dot_product_attention_math", "cpu_op", 120, 60);
    kernel["args"]["Input Dims"] = {{2, 4, 64, 32}, {2, 4, 64, 32}, {2, 4, 64, 32}, Json::array()};
    kernel["args"]["Input type"] = {"float", "float", "float", ""};
    const Json events = {memory(10, 0x1, 64 * k, 64 * k),  // the query, key and value
                         memory(20, 0x2, 64 * k, 128 * k),
                         memory(30, 0x3, 64 * k, 192 * k),
                         span("aten::scaled_dot_product_attention", "cpu_op", 100, 100),
                         memory(110, 0x4, 16 * k, 208 * k),  // the mask, made floats
                         kernel,
                         memory(130, 0x10, 128 * k, 336 * k),  // the weights, kept for backward
                         memory(150, 0x30, 64 * k, 400 * k),   // a temporary
                         memory(160, 0x30, -64 * k, 336 * k),
                         memory(190, 0x4, -16 * k, 320 * k),
                         memory(210, 0x1, -64 * k, 256 * k),
                         memory(211, 0x2, -64 * k, 192 * k),
                         memory(212, 0x3, -64 * k, 128 * k),
                         memory(250, 0x40, 512 * k, 640 * k),  // the next layer's
                         memory(260, 0x40, -512 * k, 128 * k),
                         memory(400, 0x10, -128 * k, 0)};
    const SnapshotDevice device = device_of(events);
    ASSERT_EQ(device.attention_calls.size(), 1u);
    const SnapshotAttentionCall& call = device.attention_calls[0];
    EXPECT_EQ(call.allocations.size(), 2u);
    EXPECT_EQ(call.allocations_before, std::vector<std::size_t>{3});
    EXPECT_EQ(call.logsumexp_bytes, 2 * k);
    const auto peak_of = [](const Json& trace) {
        const std::optional<GpuEstimate> made = gpu_estimate(device_of(trace));
        return made ? made->gpu_peak_allocated - made->cublas_workspaces : 0;
    };
    EXPECT_EQ(peak_of(events), 3 * 64 * k + 16 * k + 66 * k + 512 * k);

    // Where another allocation alive at the call, of another size no smaller than theirs, was
    // made between them, the inputs are those after it: here the value alone.
    Json interleaved = events;
    interleaved.push_back(memory(25, 0x5, 96 * k, 0));
    interleaved.push_back(memory(213, 0x5, -96 * k, 0));
    EXPECT_EQ(peak_of(interleaved), 64 * k + 16 * k + 66 * k + 512 * k);

    // An allocation smaller than every input, alive at the call and made between them (here 32
    // KiB, a quarter of a head's worth), is none of them: the search goes past it.
    Json small_between = events;
    small_between.push_back(memory(15, 0x6, 32 * k, 0));
    small_between.push_back(memory(214, 0x6, -32 * k, 0));
    EXPECT_EQ(peak_of(small_between), 3 * 64 * k + 16 * k + 66 * k + 512 * k);

    // Calls on two threads, the one first in the file's order of threads the later: each call's
    // inputs are still looked for back to where the call before it in time returned. Here the
    // first call (thread 8) is the one above; the second (thread 7, 1,000 us later) the same with
    // a next layer of 8 KiB, so that the peak is the first call's.
    Json two_threads;
    for (Json event : events) {
        event["tid"] = 8;
        two_threads.push_back(event);
    }
    for (Json event : events) {
        event["ts"] = event["ts"].get<double>() + 1000;
        if (event["name"] == "[memory]") {
            event["args"]["Addr"] = event["args"]["Addr"].get<std::int64_t>() + 0x1000;
            const std::int64_t bytes = event["args"]["Bytes"].get<std::int64_t>();
            if (bytes == 512 * k || bytes == -512 * k) {
                event["args"]["Bytes"] = bytes / 64;
            }
        }
        two_threads.push_back(event);
    }
    EXPECT_EQ(device_of(two_threads).attention_calls.size(), 2u);
    EXPECT_EQ(peak_of(two_threads), 3 * 64 * k + 16 * k + 66 * k + 512 * k);

    // Not trained (nothing kept past the call): nothing is held past it.
    Json evaluated = events;
    evaluated[15] = memory(155, 0x10, -128 * k, 64 * k);
    EXPECT_EQ(peak_of(evaluated), 512 * k);
}

}  // namespace
}  // namespace oomlab
