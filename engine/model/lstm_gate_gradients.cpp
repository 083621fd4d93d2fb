#include "lstm_gate_gradients.h"

#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <c10/util/Exception.h>

#include "lstm_step_rows.h"

namespace oomlab::model {
namespace {

// One row of the batch: H cells. Its pointers never alias (restrict: GCC vectorises the loop
// only when told so, and only for parameters).
template <typename T>
void row_gate_gradients(T* __restrict input, T* __restrict forget, T* __restrict candidate,
                        T* __restrict output, const T* __restrict tanh_of_cell,
                        const T* __restrict previous_cell, const T* __restrict hidden_grad,
                        T* __restrict carried, std::int64_t hidden) {
    using Acc = at::opmath_type<T>;
    const Acc one(1);
    // ATen's formulas, in its order: tanh's derivative 1 - y^2, the sigmoid's (1 - y) * y.
    for (std::int64_t j = 0; j < hidden; ++j) {
        const Acc dh = hidden_grad[j];
        const Acc i = input[j];
        const Acc f = forget[j];
        const Acc g = candidate[j];
        const Acc o = output[j];
        const Acc tc = tanh_of_cell[j];
        const Acc dc = dh * o * (one - tc * tc) + Acc(carried[j]);
        output[j] = T(dh * tc * (one - o) * o);
        candidate[j] = T(dc * i * (one - g * g));
        input[j] = T(dc * g * (one - i) * i);
        forget[j] = T(dc * Acc(previous_cell[j]) * (one - f) * f);
        carried[j] = T(dc * f);
    }
}

template <typename T>
void gate_gradients_of(const GateGradientStep& step) {
    const std::int64_t hidden = step.cell_tanh.size(1);
    for (std::int64_t b = 0; b < step.gates.size(0); ++b) {
        T* gates = row_of<T>(step.gates, b);
        row_gate_gradients<T>(gates, gates + hidden, gates + 2 * hidden, gates + 3 * hidden,
                              row_of<T>(step.cell_tanh, b), row_of<T>(step.previous_cell, b),
                              row_of<T>(step.hidden_grad, b), row_of<T>(step.carried, b), hidden);
    }
}

}  // namespace

void gate_gradients(const GateGradientStep& step) {
    TORCH_CHECK(rows_contiguous(step.gates) && rows_contiguous(step.cell_tanh) &&
                    rows_contiguous(step.previous_cell) && rows_contiguous(step.hidden_grad) &&
                    rows_contiguous(step.carried) &&
                    step.gates.size(1) == 4 * step.cell_tanh.size(1),
                "gate_gradients: views of [B, 4H] and [B, H] with contiguous rows");
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, step.gates.scalar_type(),
                                    "lstm_gate_gradients",
                                    [&] { gate_gradients_of<scalar_t>(step); });
}

}  // namespace oomlab::model
