// The fused CPU LSTM layer must compute what torch's LSTM computes, forward and backward.
#include <gtest/gtest.h>
#include <torch/nn.h>

#include "model/lstm_layer.h"
#include "oomlab/torch_utils/torch_compat.h"

namespace oomlab::model {
namespace {

struct Pass {
    torch::Tensor output;
    torch::Tensor input_grad;  // undefined when the input needs none
    std::vector<torch::Tensor> weight_grads;
};

// One forward and backward of `layer` over `x` [B, L, I], fused or through torch's LSTM.
Pass run(torch::nn::LSTM& layer, const torch::Tensor& x, bool fused) {
    layer->zero_grad();
    const torch::Tensor input = x.detach().requires_grad_(x.requires_grad());
    Pass pass;
    pass.output = fused ? bidirectional_lstm(layer, input) : std::get<0>(layer->forward(input));
    // Weights unlike each other per position, so that a step or a direction mixed up shows.
    const torch::Tensor weights =
        torch::linspace(-1.0, 2.0, pass.output.numel(), x.options()).view(pass.output.sizes());
    (pass.output * weights).sum().backward();
    if (input.requires_grad()) {
        pass.input_grad = input.grad();
    }
    for (const auto& parameter : layer->parameters()) {
        pass.weight_grads.push_back(parameter.grad().clone());
    }
    return pass;
}

torch::nn::LSTM make_layer(std::int64_t input, std::int64_t hidden, torch::Dtype dtype) {
    torch::manual_seed(5);
    torch::nn::LSTM layer(
        torch::nn::LSTMOptions(input, hidden).bidirectional(true).batch_first(true));
    layer->to(dtype);
    return layer;
}

void expect_same_pass(const Pass& expected, const Pass& actual, double tolerance) {
    EXPECT_TRUE(torch::allclose(expected.output, actual.output, tolerance, tolerance));
    ASSERT_EQ(expected.input_grad.defined(), actual.input_grad.defined());
    if (expected.input_grad.defined()) {
        EXPECT_TRUE(torch::allclose(expected.input_grad, actual.input_grad, tolerance, tolerance));
    }
    ASSERT_EQ(expected.weight_grads.size(), actual.weight_grads.size());
    for (std::size_t i = 0; i < expected.weight_grads.size(); ++i) {
        EXPECT_TRUE(
            torch::allclose(expected.weight_grads[i], actual.weight_grads[i], tolerance, tolerance))
            << "parameter " << i << ": largest difference "
            << (expected.weight_grads[i] - actual.weight_grads[i]).abs().max().item<double>();
    }
}

TEST(LstmLayer, GivesTorchsOutputsAndGradientsInDoublePrecision) {
    for (const std::int64_t length : {1, 2, 7}) {
        SCOPED_TRACE("length " + std::to_string(length));
        torch::nn::LSTM layer = make_layer(5, 4, torch::kFloat64);
        const torch::Tensor x = torch::randn({3, length, 5}, torch::kFloat64).requires_grad_();
        const Pass fused = run(layer, x, /*fused=*/true);
        expect_same_pass(run(layer, x, /*fused=*/false), fused, 1e-10);
        // Every gradient is non-zero, but the recurrent weights' of a single step.
        for (std::size_t i = 0; i < fused.weight_grads.size(); ++i) {
            const bool recurrent = i % 4 == 1;
            EXPECT_EQ(fused.weight_grads[i].abs().sum().item<double>() > 0,
                      length > 1 || !recurrent)
                << "parameter " << i;
        }
    }
}

TEST(LstmLayer, GivesTorchsGradientsInFloat32WhenTheInputNeedsNone) {
    torch::nn::LSTM layer = make_layer(6, 8, torch::kFloat32);
    const torch::Tensor x = torch::randn({4, 9, 6});
    const Pass fused = run(layer, x, /*fused=*/true);
    EXPECT_FALSE(fused.input_grad.defined());
    expect_same_pass(run(layer, x, /*fused=*/false), fused, 1e-5);
}

TEST(LstmLayer, ReadsALaterLayersTimeMajorInputWithoutCopyingIt) {
    // A layer's output is a transposed view of its time-major buffer; the next layer reads it
    // as it is, and still gets torch's gradients through the view.
    torch::nn::LSTM first = make_layer(3, 4, torch::kFloat64);
    torch::nn::LSTM second = make_layer(8, 4, torch::kFloat64);
    const torch::Tensor x = torch::randn({2, 5, 3}, torch::kFloat64);
    const torch::Tensor between = bidirectional_lstm(first, x);
    EXPECT_FALSE(between.is_contiguous());
    EXPECT_TRUE(between.transpose(0, 1).is_contiguous());
    expect_same_pass(run(second, between.detach().requires_grad_(), /*fused=*/false),
                     run(second, between.detach().requires_grad_(), /*fused=*/true), 1e-10);
}

TEST(LstmLayer, ASecondBackwardThroughTheSameGraphIsRefusedNotWrong) {
    // Backward writes the gates' gradients over the saved gates: a kept graph cannot be
    // walked again, and autograd says so instead of returning other gradients.
    torch::nn::LSTM layer = make_layer(3, 4, torch::kFloat64);
    const torch::Tensor output =
        bidirectional_lstm(layer, torch::randn({2, 5, 3}, torch::kFloat64));
    output.sum().backward({}, /*retain_graph=*/true);
    EXPECT_THROW(output.sum().backward(), c10::Error);
}

TEST(LstmLayer, RunsInTheAutocastTypeUnderAutocast) {
    torch::nn::LSTM layer = make_layer(6, 8, torch::kFloat32);
    const torch::Tensor x = torch::randn({4, 5, 6}).requires_grad_();
    const Pass in_float32 = run(layer, x, /*fused=*/true);
    Pass in_bfloat16;
    {
        const compat::AutocastScope autocast(c10::DeviceType::CPU, true, torch::kBFloat16);
        in_bfloat16 = run(layer, x, /*fused=*/true);
    }
    EXPECT_EQ(in_bfloat16.output.scalar_type(), torch::kBFloat16);
    EXPECT_EQ(in_bfloat16.input_grad.scalar_type(), torch::kFloat32);
    // bfloat16 keeps 8 bits of mantissa: within a few hundredths of the float32 pass.
    EXPECT_TRUE(
        torch::allclose(in_bfloat16.output.to(torch::kFloat32), in_float32.output, 0.05, 0.05));
    for (std::size_t i = 0; i < in_float32.weight_grads.size(); ++i) {
        EXPECT_EQ(in_bfloat16.weight_grads[i].scalar_type(), torch::kFloat32);
        EXPECT_TRUE(
            torch::allclose(in_bfloat16.weight_grads[i], in_float32.weight_grads[i], 0.1, 0.1))
            << "parameter " << i;
    }
}

}  // namespace
}  // namespace oomlab::model
