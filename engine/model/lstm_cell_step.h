// The pointwise part of one step of the fused LSTM's forward sweep.
#pragma once

#include <ATen/core/Tensor.h>

namespace oomlab::model {

// One direction's step: every view [B, H] or [B, 4H], rows contiguous.
struct CellStep {
    // In, the gates before activation (input, forget, cell candidate, output, torch's order);
    // out, activated: they are what the backward reads.
    at::Tensor gates;
    // The cell of the step read before this one; undefined for the first step read.
    at::Tensor previous_cell;
    // Written: the step's cell, its tanh, and its output (the hidden state).
    at::Tensor cell;
    at::Tensor cell_tanh;
    at::Tensor hidden;
};

// Activates the gates and makes the cell and the output. In float, one pass over the batch's
// cells with the sigmoid and tanh computed in vector registers (within 2 ulp of the C
// library's), where ATen's seven operations swept the step seven times, each also dispatched
// (about 1.6 us); other types take ATen's operations.
void cell_step(const CellStep& step);

}  // namespace oomlab::model
