// Activation checkpointing must give exactly the gradients of the plain forward.
#include <gtest/gtest.h>
#include <torch/nn.h>

#include "model/encoder_block.h"

namespace oomlab::model {
namespace {

struct Gradients {
    std::vector<torch::Tensor> parameters;
    torch::Tensor input;
};

// One forward + backward of `block` on `x`, with the same dropout randomness each time.
Gradients gradients_of(EncoderBlock& block, const torch::Tensor& x, const torch::Tensor& mask,
                       bool checkpointed) {
    block->zero_grad();
    torch::manual_seed(11);
    const torch::Tensor out =
        checkpointed ? checkpointed_forward(block, x, mask) : block->forward(x, mask);
    (out * out).sum().backward();
    Gradients result;
    for (const auto& parameter : block->parameters()) {
        result.parameters.push_back(parameter.grad().clone());
    }
    if (x.requires_grad()) {
        result.input = x.grad().clone();
        x.mutable_grad() = torch::Tensor();
    }
    return result;
}

void expect_same(const Gradients& plain, const Gradients& checkpointed) {
    ASSERT_EQ(plain.parameters.size(), checkpointed.parameters.size());
    for (std::size_t i = 0; i < plain.parameters.size(); ++i) {
        EXPECT_TRUE(torch::allclose(plain.parameters[i], checkpointed.parameters[i], 1e-5, 1e-6))
            << "parameter " << i;
        EXPECT_GT(plain.parameters[i].abs().sum().item<double>(), 0.0) << "parameter " << i;
    }
    EXPECT_EQ(plain.input.defined(), checkpointed.input.defined());
    if (plain.input.defined()) {
        EXPECT_TRUE(torch::allclose(plain.input, checkpointed.input, 1e-5, 1e-6));
    }
}

class Checkpointing : public ::testing::Test {
protected:
    void SetUp() override {
        torch::manual_seed(3);
        m_block = EncoderBlock(16, 4, 32, /*dropout=*/0.2);
        m_block->train();  // dropout active: the recompute must reuse the same masks
        m_mask = torch::ones({3, 7}, torch::kBool);
        m_mask.index_put_({2, torch::indexing::Slice(4, 7)}, false);
    }
    EncoderBlock m_block{nullptr};
    torch::Tensor m_mask;
};

TEST_F(Checkpointing, SameGradientsAsThePlainForward) {
    const torch::Tensor x = torch::randn({3, 7, 16}).requires_grad_(true);
    expect_same(gradients_of(m_block, x, m_mask, false), gradients_of(m_block, x, m_mask, true));
}

TEST_F(Checkpointing, ParametersGetGradientsWhenTheInputNeedsNone) {
    // The block's input straight from a frozen embedding table: no gradient flows into it,
    // but the block's own parameters must still learn.
    const torch::Tensor frozen_rows = torch::randn({3, 7, 16});
    expect_same(gradients_of(m_block, frozen_rows, m_mask, false),
                gradients_of(m_block, frozen_rows, m_mask, true));
}

TEST_F(Checkpointing, RecomputeLeavesTheRandomStreamWhereItWas) {
    const torch::Tensor x = torch::randn({3, 7, 16}).requires_grad_(true);
    torch::manual_seed(5);
    checkpointed_forward(m_block, x, m_mask).sum().backward();
    const torch::Tensor after_checkpointed = torch::rand({4});
    torch::manual_seed(5);
    m_block->forward(x, m_mask).sum().backward();
    const torch::Tensor after_plain = torch::rand({4});
    EXPECT_TRUE(torch::equal(after_checkpointed, after_plain));
}

}  // namespace
}  // namespace oomlab::model
