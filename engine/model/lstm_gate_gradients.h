// The pointwise part of one step of the fused LSTM's backward sweep.
#pragma once

#include <ATen/core/Tensor.h>

namespace oomlab::model {

// One direction's step, read back: every view [B, H] or [B, 4H], rows contiguous.
struct GateGradientStep {
    // The step's activated gates (input, forget, cell candidate, output): overwritten with the
    // gradients of the gates before activation.
    at::Tensor gates;
    at::Tensor cell_tanh;
    // The cell of the step read before this one; zeros for the first step read.
    at::Tensor previous_cell;
    // The gradient reaching the step's output: from above, and through the recurrence.
    at::Tensor hidden_grad;
    // In, the cell's gradient carried from the step read after this one (zeros for the last);
    // out, the one carried on to the step read before, through the forget gate.
    at::Tensor carried;
};

// One pass over the batch's cells, where ATen's operations swept the step a dozen times (each
// also dispatched, about 1.6 us): float, double and, computed in float, the 16-bit types.
void gate_gradients(const GateGradientStep& step);

}  // namespace oomlab::model
