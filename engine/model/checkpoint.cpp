// Activation checkpointing as a custom autograd function.
//
// The block's parameters are inputs of the function, so autograd calls backward whenever any
// of them needs a gradient, not only when the block's input does (the pitfall of checkpointing
// the first block after a frozen embedding).
#include <ATen/Context.h>
#include <torch/autograd.h>

#include <mutex>

#include "encoder_block.h"
#include "oomlab/torch_utils/torch_compat.h"

namespace oomlab::model {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Dropout draws from the default generator of the device it runs on (and the CPU's, for
// anything drawn on the host); the recompute must see both as the forward did.
torch::Tensor rng_state(const c10::Device& device) {
    at::Generator generator = at::globalContext().defaultGenerator(device);
    std::lock_guard<std::mutex> lock(generator.mutex());
    return generator.get_state();
}

void set_rng_state(const c10::Device& device, const torch::Tensor& state) {
    at::Generator generator = at::globalContext().defaultGenerator(device);
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(state);
}

struct RngStates {
    torch::Tensor cpu;
    torch::Tensor device;  // undefined when the block runs on the CPU
};

RngStates capture_rng(const c10::Device& device) {
    return {rng_state(c10::Device(c10::kCPU)),
            device.is_cpu() ? torch::Tensor() : rng_state(device)};
}

void restore_rng(const c10::Device& device, const RngStates& states) {
    set_rng_state(c10::Device(c10::kCPU), states.cpu);
    if (states.device.defined()) {
        set_rng_state(device, states.device);
    }
}

// Everything backward needs lives in the autograd context, so a graph that is dropped
// without backward (evaluation with autograd on) frees it too.
class CheckpointFunction : public torch::autograd::Function<CheckpointFunction> {
public:
    static torch::Tensor forward(AutogradContext* context, const torch::Tensor& x,
                                 const torch::Tensor& mask, at::TensorList /*parameters*/,
                                 EncoderBlockImpl* block) {
        context->save_for_backward({x});
        context->saved_data["mask"] = mask;
        context->saved_data["block"] = reinterpret_cast<int64_t>(block);
        const RngStates rng = capture_rng(x.device());
        context->saved_data["rng"] = rng.cpu;
        if (rng.device.defined()) {
            context->saved_data["device_rng"] = rng.device;
        }
        const c10::DeviceType device = x.device().type();
        context->saved_data["autocast"] = compat::autocast_enabled(device);
        context->saved_data["autocast_type"] = static_cast<int64_t>(compat::autocast_dtype(device));
        torch::NoGradGuard no_grad;
        return block->forward(x, mask);
    }

    static variable_list backward(AutogradContext* context, variable_list output_grads) {
        auto* block = reinterpret_cast<EncoderBlockImpl*>(context->saved_data["block"].toInt());
        const torch::Tensor mask = context->saved_data["mask"].toTensor();
        const torch::Tensor input = context->get_saved_variables()[0];
        const bool input_needs_grad = context->needs_input_grad(0);
        const torch::Tensor x = input.detach().requires_grad_(input_needs_grad);

        // Recompute with the forward's dropout masks and autocast state, then put both back.
        const RngStates rng_now = capture_rng(x.device());
        RngStates forward_rng{context->saved_data["rng"].toTensor(), torch::Tensor()};
        if (context->saved_data.count("device_rng")) {
            forward_rng.device = context->saved_data["device_rng"].toTensor();
        }
        restore_rng(x.device(), forward_rng);
        torch::Tensor output;
        {
            const compat::AutocastScope autocast(
                x.device().type(), context->saved_data["autocast"].toBool(),
                static_cast<at::ScalarType>(context->saved_data["autocast_type"].toInt()));
            torch::AutoGradMode grad_mode(true);
            output = block->forward(x, mask);
        }
        restore_rng(x.device(), rng_now);

        const auto parameters = block->parameters();
        variable_list inputs;
        if (input_needs_grad) {
            inputs.push_back(x);
        }
        for (const auto& parameter : parameters) {
            if (parameter.requires_grad()) {
                inputs.push_back(parameter);
            }
        }
        const variable_list grads = torch::autograd::grad({output}, inputs, {output_grads[0]},
                                                          /*retain_graph=*/false,
                                                          /*create_graph=*/false,
                                                          /*allow_unused=*/true);
        // One gradient per forward input: x, mask, each parameter, the block pointer.
        variable_list result;
        std::size_t next = 0;
        result.push_back(input_needs_grad ? grads[next++] : torch::Tensor());
        result.push_back(torch::Tensor());
        for (const auto& parameter : parameters) {
            result.push_back(parameter.requires_grad() ? grads[next++] : torch::Tensor());
        }
        result.push_back(torch::Tensor());
        return result;
    }
};

}  // namespace

torch::Tensor checkpointed_forward(EncoderBlock& block, const torch::Tensor& x,
                                   const torch::Tensor& mask) {
    if (!torch::GradMode::is_enabled()) {
        return block->forward(x, mask);
    }
    // As a TensorList each parameter becomes an input of the node (a vector would be opaque).
    const std::vector<torch::Tensor> parameters = block->parameters();
    return CheckpointFunction::apply(x, mask, at::TensorList(parameters), block.get());
}

}  // namespace oomlab::model
