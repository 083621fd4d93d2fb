// cuDNN's RNN buffers against what cuDNN asked for on an H200 (bench/results/
// gpu-2026-12-04-kernels: the scripts' histories and probe_kernels.py's grids), for four models'
// RNNs whose shapes are off the recorded grid, and the rules the grid showed.
#include <gtest/gtest.h>

#include "oomlab/allocator/cudnn_rnn.h"

namespace oomlab::allocator {
namespace {

struct Recorded {
    const char* script;
    RnnShape shape;
    std::int64_t workspace;  // forward's, as _cudnn_rnn asked for it
    std::int64_t reserve;    // the allocator's block: the request rounded up to 512 bytes
};

// cpu_estimate.py's RNN scripts, fp32 (bench/results/gpu-2026-12-04-kernels/cuda-*.pickle.gz).
const Recorded kScripts[] = {
    {"bilstm", {false, 1, 2, 64, 128, 256, 512, 4}, 275776256, 167772416},
    {"gru", {true, 2, 1, 48, 96, 200, 384, 4}, 55743104, 92012800},
    {"lstm2", {false, 2, 1, 32, 160, 128, 320, 4}, 58556928, 72089856},
    {"bigru", {true, 1, 2, 40, 116, 300, 256, 4}, 83351616, 57016576},
};

TEST(CudnnRnn, TheReserveIsTheRecordedOneAndTheWorkspaceWithinFivePercent) {
    for (const Recorded& recorded : kScripts) {
        SCOPED_TRACE(recorded.script);
        const CudnnRnnBuffers buffers = cudnn_rnn_buffers(recorded.shape);
        EXPECT_LE(buffers.reserve, recorded.reserve);
        EXPECT_GT(buffers.reserve + 512, recorded.reserve);
        EXPECT_NEAR(double(buffers.workspace) / double(recorded.workspace), 1.0, 0.05);
    }
}

TEST(CudnnRnn, TheReserveGrowsBySixOutputsALayerForAnLstmAndSevenForAGru) {
    RnnShape lstm{false, 1, 1, 8, 16, 64, 128, 2};
    const std::int64_t output = 8 * 16 * 128 * 2;
    EXPECT_EQ(cudnn_rnn_buffers(lstm).reserve, 5 * output);
    lstm.layers = 3;
    EXPECT_EQ(cudnn_rnn_buffers(lstm).reserve, 17 * output);
    RnnShape gru = lstm;
    gru.gru = true;
    EXPECT_EQ(cudnn_rnn_buffers(gru).reserve, 20 * output);
}

// Recorded on the grid: a one-layer one-directional fp32 LSTM, batch 32 of 64 steps, input 64,
// hidden 192 and 224, either side of where cuDNN changes its way: the workspace a token drops
// from about 21 x hidden to about 5 x hidden bytes a direction and byte of element.
TEST(CudnnRnn, TheWorkspaceFollowsCudnnsChangeOfWayBetweenHidden192And224) {
    RnnShape shape{false, 1, 1, 32, 64, 64, 192, 4};
    const std::int64_t below = cudnn_rnn_buffers(shape).workspace;
    shape.hidden = 224;
    const std::int64_t above = cudnn_rnn_buffers(shape).workspace;
    EXPECT_GT(below, above);
    // Past the recorded sizes it goes on growing with the hidden size, not flat.
    shape.hidden = 1024;
    const std::int64_t recorded_largest = cudnn_rnn_buffers(shape).workspace;
    shape.hidden = 2048;
    EXPECT_GT(cudnn_rnn_buffers(shape).workspace, recorded_largest + 32 * 64 * 5 * 1024 * 4);
}

}  // namespace
}  // namespace oomlab::allocator
