// One bidirectional LSTM layer on the CPU as a single autograd function.
#pragma once

#include <torch/nn/modules/rnn.h>

namespace oomlab::model {

// Runs `layer` (one bidirectional layer, batch first) over `x` [B, L, I] and returns its
// output [B, L, 2H], with the gradients torch's LSTM gives. Under autocast it runs in the
// autocast type, as cuDNN's LSTM does under CUDA's autocast.
//
// ATen's native CPU LSTM records a dozen operations per time step in the autograd graph and
// walks them back one by one; oneDNN's is fast but keeps twice the activations. This layer
// projects both directions' inputs with one matrix product, runs the recurrence with no graph,
// and makes each weight gradient with one product after the backward sweep. It keeps, per time
// step and direction, the activated gates (4H), the cell and its tanh (H each), beside its
// output and its input in time-major order.
torch::Tensor bidirectional_lstm(const torch::nn::LSTM& layer, const torch::Tensor& x);

}  // namespace oomlab::model
