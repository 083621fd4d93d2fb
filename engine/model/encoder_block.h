// A pre-norm transformer encoder block (self-attention + feed-forward), written out so that
// its memory is visible op by op and so that it can be checkpointed as a unit.
#pragma once

#include <torch/nn.h>

namespace oomlab::model {

class EncoderBlockImpl : public torch::nn::Module {
public:
    EncoderBlockImpl(int d_model, int heads, int ffn, double dropout);
    // x: [B, L, d_model]; mask: [B, L] bool, true for real tokens.
    torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& mask);

private:
    torch::Tensor attention(const torch::Tensor& x, const torch::Tensor& mask);

    int m_heads;
    torch::nn::LayerNorm m_attention_norm{nullptr};
    torch::nn::Linear m_qkv{nullptr};
    torch::nn::Linear m_attention_output{nullptr};
    torch::nn::LayerNorm m_ffn_norm{nullptr};
    torch::nn::Linear m_ffn_in{nullptr};
    torch::nn::Linear m_ffn_out{nullptr};
    torch::nn::Dropout m_dropout{nullptr};
};
TORCH_MODULE(EncoderBlock);

// Runs `block` without keeping its activations; backward recomputes them (same dropout masks,
// same autocast state). Gradients reach the block's parameters even when `x` needs none,
// e.g. when it comes straight from a frozen embedding table.
torch::Tensor checkpointed_forward(EncoderBlock& block, const torch::Tensor& x,
                                   const torch::Tensor& mask);

}  // namespace oomlab::model
