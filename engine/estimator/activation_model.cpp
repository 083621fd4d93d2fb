#include "estimator/activation_model.h"

#include <algorithm>

namespace oomlab::memory {
namespace {

constexpr std::int64_t kFloat = 4;

// Share of the saved activations that autocast keeps in 16 bits (the outputs of linear and
// matmul and the inputs they save), measured per model on CPU with bf16.
double half_precision_share(ModelKind kind) {
    switch (kind) {
        case ModelKind::Bag:
            return 0.0;
        case ModelKind::BiLstm:
            return 0.5;
        case ModelKind::Transformer:
            return 0.85;
    }
    return 0.0;
}

std::int64_t linear(std::int64_t in, std::int64_t out) {
    return in * out + out;
}
std::int64_t layer_norm(std::int64_t width) {
    return 2 * width;
}

}  // namespace

std::int64_t non_embedding_parameters(const ExperimentConfig& config, int embedding_dim,
                                      int num_classes) {
    const ModelConfig& m = config.model;
    switch (m.kind) {
        case ModelKind::Bag:
            return linear(embedding_dim, m.hidden) + linear(m.hidden, num_classes);
        case ModelKind::BiLstm: {
            std::int64_t total = 0;
            for (int layer = 0; layer < m.layers; ++layer) {
                const std::int64_t in = layer == 0 ? embedding_dim : 2 * m.hidden;
                // Two directions: input and hidden weights and their two biases.
                total += 2 * (4LL * m.hidden * (in + m.hidden) + 8LL * m.hidden);
            }
            return total + linear(2 * m.hidden, num_classes);
        }
        case ModelKind::Transformer: {
            const std::int64_t d = m.d_model;
            const std::int64_t block = layer_norm(d) + linear(d, 3 * d) + linear(d, d) +
                                       layer_norm(d) + linear(d, m.ffn) + linear(m.ffn, d);
            return linear(embedding_dim, d) + std::int64_t(config.train.max_len) * d +
                   m.layers * block + layer_norm(d) + linear(d, num_classes);
        }
    }
    return 0;
}

ActivationBytes estimate_activations(const ExperimentConfig& config, int embedding_dim,
                                     int num_classes, const BatchShape& shape) {
    const ModelConfig& m = config.model;
    const std::int64_t b = shape.batch;
    const std::int64_t l = shape.length;
    const std::int64_t bl = b * l;
    const bool dropout = m.dropout > 0;
    ActivationBytes result;
    // The looked-up rows [B, L, D] in float32 (plus their 16-bit originals, briefly).
    const std::int64_t lookup = bl * embedding_dim * kFloat;
    // Masked mean over [B, L, W]: keeps the values and the mask weights; the product is
    // a temporary of the values' size.
    const auto pooling = [&](std::int64_t width) { return bl * kFloat + 2 * b * width * kFloat; };

    switch (m.kind) {
        case ModelKind::Bag: {
            const std::int64_t head = b * m.hidden * kFloat * (dropout ? 4 : 2);
            result.saved = lookup + pooling(embedding_dim) + head;
            result.forward_transient = lookup;
            result.backward_transient = lookup;
            break;
        }
        case ModelKind::BiLstm: {
            const std::int64_t h = m.hidden;
            // Per direction, layer and time step: gates (4H), the cell, tanh(cell), output.
            const std::int64_t cells = 2LL * m.layers * bl * 7 * h * kFloat;
            std::int64_t layer_io = lookup;
            for (int layer = 1; layer < m.layers; ++layer) {
                layer_io += bl * 2 * h * kFloat * (dropout ? 2 : 1);
            }
            result.saved = cells + layer_io + bl * 2 * h * kFloat + pooling(2 * h);
            // Both directions' input projections [L, B, 4H] exist together.
            result.forward_transient = 2 * bl * 4 * h * kFloat;
            result.backward_transient = result.forward_transient;
            break;
        }
        case ModelKind::Transformer: {
            const std::int64_t d = m.d_model;
            const std::int64_t attention_map = b * m.heads * l * l * kFloat;
            // Norm outputs, q/k/v copies, context, residuals, dropout masks; the FFN's two
            // wide activations; softmax output (+ its dropout mask and output).
            std::int64_t block = (dropout ? 10 : 8) * bl * d * kFloat + 2 * bl * m.ffn * kFloat +
                                 (dropout ? 3 : 1) * attention_map;
            if (config.memory.precision != DType::Fp32) {
                block -= static_cast<std::int64_t>(block * half_precision_share(m.kind) / 2);
            }
            result.per_block_saved = block;
            std::int64_t stem = lookup + (dropout ? 2 : 1) * bl * d * kFloat;
            std::int64_t tail = bl * d * kFloat + pooling(d);
            if (config.memory.precision != DType::Fp32) {
                stem -= static_cast<std::int64_t>(stem * half_precision_share(m.kind) / 2);
                tail -= static_cast<std::int64_t>(tail * half_precision_share(m.kind) / 2);
            }
            const std::int64_t widest = std::max(attention_map, bl * m.ffn * kFloat);
            if (config.memory.checkpointing == Checkpointing::Layers) {
                // Only each block's input stays; backward recomputes one block at a time.
                result.saved = stem + m.layers * bl * d * kFloat + tail;
                result.backward_transient = block + widest;
            } else {
                result.saved = stem + m.layers * block + tail;
                result.backward_transient = widest;
            }
            result.forward_transient = widest;
            break;
        }
    }
    result.saved += b * num_classes * kFloat * 3;  // logits, log-softmax, their gradient
    if (config.memory.precision != DType::Fp32 && m.kind != ModelKind::Transformer) {
        result.saved -= static_cast<std::int64_t>(result.saved * half_precision_share(m.kind) / 2);
    }
    return result;
}

}  // namespace oomlab::memory
