#include "lstm_layer.h"

#include <torch/autograd.h>
#include <torch/csrc/autograd/variable.h>

#include <array>
#include <string>

#include "lstm_cell_step.h"
#include "lstm_gate_gradients.h"
#include "matrix_product.h"
#include "oomlab/torch_utils/torch_compat.h"

namespace oomlab::model {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// A direction's columns in the layer's time-major buffers: [L, B, 8H] for the gates (the
// forward direction's 4H, then the reverse's), [L, B, 2H] for cells and outputs.
struct Direction {
    int index;  // 0 reads the steps first to last, 1 last to first
    std::int64_t hidden;
    std::int64_t length;

    // The time step read k-th.
    std::int64_t step(std::int64_t k) const { return index == 0 ? k : length - 1 - k; }
    torch::Tensor gates(const torch::Tensor& all, std::int64_t t) const {
        return all.select(0, t).narrow(1, 4 * hidden * index, 4 * hidden);
    }
    torch::Tensor state(const torch::Tensor& all, std::int64_t t) const {
        return all.select(0, t).narrow(1, hidden * index, hidden);
    }
    // Every step but the one read first, and beside it the state of the step read before each.
    torch::Tensor later_gates(const torch::Tensor& all) const {
        return all.narrow(0, index == 0 ? 1 : 0, length - 1)
            .narrow(2, 4 * hidden * index, 4 * hidden);
    }
    torch::Tensor earlier_states(const torch::Tensor& all) const {
        return all.narrow(0, index == 0 ? 0 : 1, length - 1).narrow(2, hidden * index, hidden);
    }
};

// Per direction: input weights, recurrent weights, input bias, recurrent bias.
constexpr int kWeightsPerDirection = 4;

class BidirectionalLstm : public torch::autograd::Function<BidirectionalLstm> {
public:
    // x: [L, B, I]; weights: the forward direction's four, then the reverse's. Returns
    // [L, B, 2H].
    static torch::Tensor forward(AutogradContext* context, const torch::Tensor& x,
                                 at::TensorList weights) {
        const torch::Tensor input = x.contiguous();
        const std::int64_t length = input.size(0);
        const std::int64_t batch = input.size(1);
        const std::int64_t hidden = weights[1].size(1);
        // Both directions' input projections in one product; each step adds its recurrent
        // product and activates in place, so this buffer becomes the saved gates.
        const torch::Tensor gates = torch::empty({length, batch, 8 * hidden}, input.options());
        const torch::Tensor flat_gates = gates.view({length * batch, 8 * hidden});
        flat_gates.copy_(torch::cat({weights[2] + weights[3], weights[6] + weights[7]}));
        multiply_into(flat_gates, input.view({length * batch, input.size(2)}),
                      torch::cat({weights[0], weights[4]}).t(), 1.0F);
        const torch::Tensor cells = torch::empty({length, batch, 2 * hidden}, input.options());
        const torch::Tensor cell_tanh = torch::empty_like(cells);
        const torch::Tensor output = torch::empty_like(cells);
        for (int index = 0; index < 2; ++index) {
            const Direction direction{index, hidden, length};
            const torch::Tensor recurrent = weights[kWeightsPerDirection * index + 1].t();
            for (std::int64_t k = 0; k < length; ++k) {
                const std::int64_t t = direction.step(k);
                torch::Tensor step_gates = direction.gates(gates, t);
                if (k > 0) {
                    multiply_into(step_gates, direction.state(output, direction.step(k - 1)),
                                  recurrent, 1.0F);
                }
                cell_step({step_gates,
                           k > 0 ? direction.state(cells, direction.step(k - 1)) : at::Tensor(),
                           direction.state(cells, t), direction.state(cell_tanh, t),
                           direction.state(output, t)});
            }
        }
        context->save_for_backward({input, gates, cells, cell_tanh, output, weights[0], weights[1],
                                    weights[4], weights[5]});
        return output;
    }

    static variable_list backward(AutogradContext* context, variable_list output_grads) {
        const variable_list saved = context->get_saved_variables();
        const torch::Tensor& input = saved[0];
        const torch::Tensor& gates = saved[1];
        const torch::Tensor& cells = saved[2];
        const torch::Tensor& cell_tanh = saved[3];
        const torch::Tensor& output = saved[4];
        const std::array<torch::Tensor, 2> input_weights = {saved[5], saved[7]};
        const std::array<torch::Tensor, 2> recurrent_weights = {saved[6], saved[8]};
        const torch::Tensor grad = output_grads[0].contiguous();
        const std::int64_t length = input.size(0);
        const std::int64_t batch = input.size(1);
        const std::int64_t hidden = cells.size(2) / 2;

        // Swept back through time, each step's gates are replaced by their gradient before
        // activation (as cuDNN's backward reuses its reserve space): no second buffer.
        const torch::Tensor& gate_grads = gates;
        const torch::Tensor hidden_grad = torch::empty({batch, hidden}, grad.options());
        const torch::Tensor carried = torch::empty({batch, hidden}, grad.options());
        const torch::Tensor no_cell = torch::zeros({batch, hidden}, grad.options());
        for (int index = 0; index < 2; ++index) {
            const Direction direction{index, hidden, length};
            carried.zero_();
            for (std::int64_t k = length - 1; k >= 0; --k) {
                const std::int64_t t = direction.step(k);
                hidden_grad.copy_(direction.state(grad, t));
                if (k + 1 < length) {
                    multiply_into(hidden_grad, direction.gates(gate_grads, direction.step(k + 1)),
                                  recurrent_weights[index], 1.0F);
                }
                gate_gradients({direction.gates(gates, t), direction.state(cell_tanh, t),
                                k > 0 ? direction.state(cells, direction.step(k - 1)) : no_cell,
                                hidden_grad, carried});
            }
        }
        // Written in place through pointers: autograd is told, so that a second backward
        // through a kept graph is refused rather than reading gradients as gates.
        torch::autograd::impl::bump_version(gates);

        // One product per weight over all steps at once.
        const torch::Tensor flat_input = input.view({length * batch, input.size(2)});
        const torch::Tensor flat_grads = gate_grads.view({length * batch, 8 * hidden});
        const auto direction_grads = [&](int index) {
            return flat_grads.narrow(1, 4 * hidden * index, 4 * hidden);
        };
        variable_list result(1 + 2 * kWeightsPerDirection);
        if (context->needs_input_grad(0)) {
            const torch::Tensor input_grad = torch::empty_like(flat_input);
            multiply_into(input_grad, direction_grads(0), input_weights[0], 0.0F);
            multiply_into(input_grad, direction_grads(1), input_weights[1], 1.0F);
            result[0] = input_grad.view({length, batch, input.size(2)});
        }
        for (int index = 0; index < 2; ++index) {
            const Direction direction{index, hidden, length};
            const int first = 1 + kWeightsPerDirection * index;
            const torch::Tensor grads = direction_grads(index);
            result[first] = torch::empty_like(input_weights[index]);
            multiply_into(result[first], grads.t(), flat_input, 0.0F);
            result[first + 1] = torch::zeros_like(recurrent_weights[index]);
            if (length > 1) {
                multiply_into(result[first + 1],
                              direction.later_gates(gate_grads).reshape({-1, 4 * hidden}).t(),
                              direction.earlier_states(output).reshape({-1, hidden}), 0.0F);
            }
            // Both biases are added to the same gates: each gets the gates' gradient.
            result[first + 2] = grads.sum(0);
            result[first + 3] = result[first + 2].clone();
        }
        return result;
    }
};

}  // namespace

torch::Tensor bidirectional_lstm(const torch::nn::LSTM& layer, const torch::Tensor& x) {
    const auto parameters = layer->named_parameters(/*recurse=*/false);
    std::vector<torch::Tensor> weights;
    for (const std::string suffix : {"", "_reverse"}) {
        for (const char* name : {"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"}) {
            weights.push_back(parameters[name + suffix]);
        }
    }
    torch::Tensor input = x.transpose(0, 1);
    const c10::DeviceType device = x.device().type();
    if (compat::autocast_enabled(device)) {
        const at::ScalarType type = compat::autocast_dtype(device);
        input = input.to(type);
        for (torch::Tensor& weight : weights) {
            weight = weight.to(type);
        }
    }
    return BidirectionalLstm::apply(input, at::TensorList(weights)).transpose(0, 1);
}

}  // namespace oomlab::model
