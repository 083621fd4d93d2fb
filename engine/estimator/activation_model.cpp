#include "activation_model.h"

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
std::int64_t block_parameters(const ModelConfig& m) {
    const std::int64_t d = m.d_model;
    return layer_norm(d) + linear(d, 3 * d) + linear(d, d) + layer_norm(d) + linear(d, m.ffn) +
           linear(m.ffn, d);
}

}  // namespace

std::vector<ModuleBytes> parameters_by_module(const ExperimentConfig& config, int embedding_dim,
                                              int num_classes) {
    const ModelConfig& m = config.model;
    std::vector<ModuleBytes> modules;
    switch (m.kind) {
        case ModelKind::Bag:
            modules = {{"pooling", 0},
                       {"hidden", linear(embedding_dim, m.hidden)},
                       {"output", linear(m.hidden, num_classes)}};
            break;
        case ModelKind::BiLstm:
            for (int layer = 0; layer < m.layers; ++layer) {
                const std::int64_t in = layer == 0 ? embedding_dim : 2 * m.hidden;
                // Two directions: input and hidden weights and their two biases.
                modules.push_back({"lstm layer " + std::to_string(layer + 1),
                                   2 * (4LL * m.hidden * (in + m.hidden) + 8LL * m.hidden)});
            }
            modules.push_back({"head", linear(2 * m.hidden, num_classes)});
            break;
        case ModelKind::Transformer: {
            const std::int64_t d = m.d_model;
            const std::int64_t block = block_parameters(m);
            modules.push_back(
                {"projection", linear(embedding_dim, d) + std::int64_t(config.train.max_len) * d});
            for (int layer = 0; layer < m.layers; ++layer) {
                modules.push_back({"block " + std::to_string(layer + 1), block});
            }
            modules.push_back({"head", layer_norm(d) + linear(d, num_classes)});
            break;
        }
    }
    return modules;
}

std::int64_t non_embedding_parameters(const ExperimentConfig& config, int embedding_dim,
                                      int num_classes) {
    std::int64_t total = 0;
    for (const ModuleBytes& module : parameters_by_module(config, embedding_dim, num_classes)) {
        total += module.bytes;
    }
    return total;
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

    std::vector<ModuleBytes>& modules = result.saved_by_module;
    switch (m.kind) {
        case ModelKind::Bag: {
            const std::int64_t head = b * m.hidden * kFloat * (dropout ? 4 : 2);
            modules = {{"embeddings", lookup},
                       {"pooling", pooling(embedding_dim)},
                       {"hidden", head},
                       {"output", 0}};
            result.forward_transient = lookup;  // the masked product
            result.forward_transient_in = "pooling";
            // The gradient of the looked-up rows, which the pooling's backward makes.
            result.backward_transient = lookup;
            result.backward_starts_in = "pooling";
            result.backward_ends_in = "pooling";
            break;
        }
        case ModelKind::BiLstm: {
            const std::int64_t h = m.hidden;
            // Per direction and time step: gates (4H), the cell, tanh(cell), output.
            const std::int64_t cells = 2LL * bl * 7 * h * kFloat;
            // The first layer keeps its time-major input and the reversed copy the backward
            // direction reads; the looked-up rows themselves are not kept.
            modules.push_back({"embeddings", 0});
            for (int layer = 1; layer <= m.layers; ++layer) {
                // Each layer's output, kept with its dropout mask for the next layer's input.
                const std::int64_t output =
                    bl * 2 * h * kFloat * (layer < m.layers && dropout ? 2 : 1);
                modules.push_back({"lstm layer " + std::to_string(layer),
                                   cells + output + (layer == 1 ? 2 * lookup : 0)});
            }
            modules.push_back({"head", pooling(2 * h)});
            result.at_backward_start = modules;
            result.at_backward_start[std::size_t(m.layers) + 1].bytes =
                0;  // the head's backward ran
            // Both directions' input projections [L, B, 4H] exist together.
            result.forward_transient = 2 * bl * 4 * h * kFloat;
            result.backward_transient = result.forward_transient;
            result.backward_starts_in = "lstm layer " + std::to_string(m.layers);
            result.backward_ends_in = "lstm layer 1";
            result.forward_transient_in = result.backward_starts_in;  // most is saved by then
            break;
        }
        case ModelKind::Transformer: {
            const std::int64_t d = m.d_model;
            const std::int64_t attention_map = b * m.heads * l * l * kFloat;
            // Norm outputs, q/k/v copies, context, residuals, dropout masks; the FFN's two
            // wide activations; softmax output (+ its dropout mask and output).
            std::int64_t block = (dropout ? 10 : 8) * bl * d * kFloat + 2 * bl * m.ffn * kFloat +
                                 (dropout ? 3 : 1) * attention_map;
            const bool half = config.memory.precision != DType::Fp32;
            const auto in_precision = [&](std::int64_t bytes) {
                return half ? bytes - static_cast<std::int64_t>(bytes *
                                                                half_precision_share(m.kind) / 2)
                            : bytes;
            };
            block = in_precision(block);
            result.per_block_saved = block;
            // The looked-up rows stay in float32; autocast's projection keeps a 16-bit copy
            // of them beside its own float32 output (its dropout's too).
            modules.push_back({"embeddings", lookup});
            modules.push_back(
                {"projection", (dropout ? 2 : 1) * bl * d * kFloat + (half ? lookup / 2 : 0)});
            const std::int64_t widest = std::max(attention_map, bl * m.ffn * kFloat);
            const bool checkpointing = config.memory.checkpointing == Checkpointing::Layers;
            for (int layer = 1; layer <= m.layers; ++layer) {
                // Checkpointed, only each block's input stays; backward recomputes one block
                // at a time.
                modules.push_back(
                    {"block " + std::to_string(layer), checkpointing ? bl * d * kFloat : block});
            }
            modules.push_back({"head", in_precision(bl * d * kFloat + pooling(d))});
            result.backward_transient = checkpointing ? block + widest : widest;
            result.forward_transient = widest;
            result.forward_transient_in = "block " + std::to_string(m.layers);
            result.backward_ends_in = "projection";
            // Backward peaks in the last block, as the first weight gradients (the head's, the
            // block's output layer's) appear beside every saved tensor. Checkpointed, it
            // recomputes one block at a time: the last, beside every block's kept input, or the
            // first, once every later block's gradients exist, whichever the model's shapes
            // make larger (a block's weights against its input). The head has passed on its
            // input's gradient (float32 only: with autocast it is gone by then). Accumulating,
            // every gradient exists from the start: then the last block.
            const std::int64_t block_weights = block_parameters(m) * kFloat;
            const bool first_block_peaks =
                checkpointing && config.train.accumulation == 1 && block_weights >= bl * d * kFloat;
            const int peak_block = first_block_peaks ? 1 : m.layers;
            result.backward_starts_in = "block " + std::to_string(peak_block);
            // At the end only the gradient of the looked-up rows is left, which the
            // projection's backward makes (recomputed blocks are gone by then).
            result.backward_end_transient = lookup;
            result.at_backward_start = modules;
            result.at_backward_start.back().bytes =
                half || peak_block != m.layers ? 0 : bl * d * kFloat;
            for (int later = peak_block + 1; later <= m.layers; ++later) {
                result.gradients_done.push_back("block " + std::to_string(later));
            }
            if (!half) {
                // With autocast the peak comes before the first weight gradient.
                result.gradients_done.push_back("head");
                result.gradient_in_progress = {result.backward_starts_in, linear(m.ffn, d)};
            }
            break;
        }
    }
    modules.push_back({"loss", b * num_classes * kFloat * 3});  // logits, log-softmax, gradient
    result.saved = total_bytes(modules);
    if (result.backward_end_transient == 0) {
        result.backward_end_transient = result.backward_transient;
    }
    if (result.at_backward_start.empty()) {
        // The modules after the one where backward peaks have run their backward.
        result.at_backward_start = modules;
        bool after = false;
        for (ModuleBytes& module : result.at_backward_start) {
            module.bytes = after ? 0 : module.bytes;
            after = after || module.module == result.backward_starts_in;
        }
    } else {
        result.at_backward_start.push_back({"loss", 0});  // backward began there
    }
    if (config.memory.precision != DType::Fp32 && m.kind != ModelKind::Transformer) {
        const double kept = 1.0 - half_precision_share(m.kind) / 2;
        for (auto* list : {&modules, &result.at_backward_start}) {
            for (ModuleBytes& module : *list) {
                module.bytes = static_cast<std::int64_t>(double(module.bytes) * kept);
            }
        }
        result.saved = total_bytes(modules);
    }
    result.at_forward_peak = modules;
    bool later = false;
    for (ModuleBytes& module : result.at_forward_peak) {
        module.bytes = later ? 0 : module.bytes;
        later = later || module.module == result.forward_transient_in;
    }
    return result;
}

std::int64_t total_bytes(const std::vector<ModuleBytes>& modules) {
    std::int64_t total = 0;
    for (const ModuleBytes& module : modules) {
        total += module.bytes;
    }
    return total;
}

}  // namespace oomlab::memory
