// What PyTorch's cuDNN RNNs (ATen's _cudnn_rnn: nn.LSTM and nn.GRU on CUDA) ask the caching
// allocator for beside their outputs: a reserve buffer forward fills and backward reads, kept
// from one to the other, and a workspace made and freed in forward and again, the same size,
// in each of backward's two calls (the input's gradient, the weights'). cuDNN sizes them
// itself (cudnnGetRNNTempSpaceSizes, which needs a GPU); the sizes here were recorded on one
// (bench/gpu/probe_kernels.py, an H200 with cuDNN 9.19 and PyTorch 2.11) and fitted by
// bench/gpu/fit_cudnn_rnn.py, whose README says how far they carry
// (bench/results/gpu-2026-12-04-kernels).
#pragma once

#include <cstdint>

namespace oomlab::allocator {

struct RnnShape {
    bool gru = false;  // else an LSTM
    std::int64_t layers = 1;
    std::int64_t directions = 1;
    std::int64_t batch = 1;
    std::int64_t length = 1;   // time steps
    std::int64_t input = 1;    // the first layer's input width
    std::int64_t hidden = 1;   // per direction
    std::int64_t element = 4;  // bytes of the type it runs in: 4, or 2 under autocast

    std::int64_t output_bytes() const { return length * batch * directions * hidden * element; }
};

struct CudnnRnnBuffers {
    std::int64_t workspace = 0;  // each of the three
    std::int64_t reserve = 0;    // from forward to the end of backward, when it trains
};

// The reserve is (6 x layers - 1) times the output for an LSTM and (7 x layers - 1) times for a
// GRU: exact for all 1,299 recorded shapes. The workspace is 8 MiB a layer and direction, the
// weights' bytes, and a part per token and one per example: within 2.1% of 90% of those shapes
// (median 0.3%, at most 12.6%), and of four models' RNNs off the recorded grid within -4.4% to
// +0.5%. Hidden sizes are recorded from 64 to 1024 and input widths at 64 and 300: between them
// in a straight line, below them the nearest, past 1024 on the line through 768 and 1024.
CudnnRnnBuffers cudnn_rnn_buffers(const RnnShape& shape);

}  // namespace oomlab::allocator
