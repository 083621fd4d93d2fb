// What PyTorch's cuDNN LSTM (ATen's _cudnn_rnn, the engine's BiLSTM layer on CUDA) asks the
// caching allocator for beside its output: a reserve buffer its forward fills and its backward
// reads, and a workspace made and freed in forward and again in each of backward's two calls
// (the input's gradient, the weights'). Their sizes come from cuDNN's own queries
// (cudnnGetRNNTempSpaceSizes), which need a GPU (cudnnCreate fails without one): they were
// recorded on one (bench/gpu/probe_device_memory.py) and are kept here as data, fitted by
// bench/gpu/fit_cudnn_workspace.py. docs/estimator.md says how far they carry.
#pragma once

#include <cstdint>

namespace oomlab::estimator {

struct LstmShape {
    std::int64_t batch = 1;
    std::int64_t length = 1;   // padded tokens per example
    std::int64_t input = 1;    // the layer's input width
    std::int64_t hidden = 1;   // per direction
    std::int64_t element = 4;  // bytes of the type the layer runs in: 4, or 2 under autocast
};

struct CudnnLstmBuffers {
    std::int64_t workspace = 0;  // each of the three
    std::int64_t reserve = 0;    // from forward to the end of backward
};

// One bidirectional layer's buffers in training. The reserve is exact for every recorded
// shape (5 times the output, plus 256 bytes); the workspace is within 0.4% of every shape
// recorded on an H200 with cuDNN 9.19 (hidden 64-256, inputs 50-300, batch 8-128, 8-128
// tokens), interpolated between the recorded sizes; past them it grows in proportion to the
// hidden size and in a straight line with the input width, which no GPU has confirmed.
CudnnLstmBuffers cudnn_lstm_buffers(const LstmShape& shape);

}  // namespace oomlab::estimator
