#include "encoder_block.h"

#include <cmath>

namespace oomlab::model {

EncoderBlockImpl::EncoderBlockImpl(int d_model, int heads, int ffn, double dropout)
    : m_heads(heads) {
    m_attention_norm = register_module(
        "attention_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d_model})));
    m_qkv = register_module("qkv", torch::nn::Linear(d_model, 3 * d_model));
    m_attention_output = register_module("attention_output", torch::nn::Linear(d_model, d_model));
    m_ffn_norm =
        register_module("ffn_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d_model})));
    m_ffn_in = register_module("ffn_in", torch::nn::Linear(d_model, ffn));
    m_ffn_out = register_module("ffn_out", torch::nn::Linear(ffn, d_model));
    m_dropout = register_module("dropout", torch::nn::Dropout(dropout));
}

torch::Tensor EncoderBlockImpl::attention(const torch::Tensor& x, const torch::Tensor& mask) {
    const int64_t batch = x.size(0);
    const int64_t length = x.size(1);
    const int64_t width = x.size(2);
    const int64_t head_dim = width / m_heads;
    // [B, L, 3, H, hd] -> three [B, H, L, hd]
    const auto qkv =
        m_qkv->forward(x).view({batch, length, 3, m_heads, head_dim}).permute({2, 0, 3, 1, 4});
    const torch::Tensor scores =
        torch::matmul(qkv[0], qkv[1].transpose(-2, -1)) / std::sqrt(double(head_dim));
    const torch::Tensor padding = mask.logical_not().view({batch, 1, 1, length});
    const torch::Tensor weights =
        m_dropout->forward(torch::softmax(scores.masked_fill(padding, -1e4), -1));
    const torch::Tensor context =
        torch::matmul(weights, qkv[2]).transpose(1, 2).reshape({batch, length, width});
    return m_attention_output->forward(context);
}

torch::Tensor EncoderBlockImpl::forward(const torch::Tensor& x, const torch::Tensor& mask) {
    const torch::Tensor attended =
        x + m_dropout->forward(attention(m_attention_norm->forward(x), mask));
    const torch::Tensor hidden = torch::gelu(m_ffn_in->forward(m_ffn_norm->forward(attended)));
    return attended + m_dropout->forward(m_ffn_out->forward(hidden));
}

}  // namespace oomlab::model
