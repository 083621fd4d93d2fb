#include "activation_model.h"

#include <algorithm>

#include "cudnn_lstm.h"

namespace oomlab::memory {
namespace {

constexpr std::int64_t kFloat = 4;

// Share of a transformer's saved activations that autocast keeps in 16 bits (the outputs of
// linear and matmul and the inputs they save), measured on CPU with bf16. The bag keeps none;
// the BiLSTM's buffers are sized in their own type.
constexpr double kTransformerHalfPrecisionShare = 0.85;

using Tensors = std::vector<std::int64_t>;

Tensors operator+(Tensors a, const Tensors& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

std::int64_t sum(const Tensors& tensors) {
    std::int64_t total = 0;
    for (const std::int64_t size : tensors) {
        total += size;
    }
    return total;
}

// `count` tensors of `size`.
Tensors times(std::int64_t count, std::int64_t size) {
    return Tensors(std::size_t(std::max<std::int64_t>(0, count)), size);
}

// Parameters (elements), tensor by tensor.
Tensors linear(std::int64_t in, std::int64_t out) {
    return {in * out, out};
}
Tensors layer_norm(std::int64_t width) {
    return {width, width};
}
Tensors block_parameters(const ModelConfig& m) {
    const std::int64_t d = m.d_model;
    return layer_norm(d) + linear(d, 3 * d) + linear(d, d) + layer_norm(d) + linear(d, m.ffn) +
           linear(m.ffn, d);
}

}  // namespace

ModuleBytes made_of(std::string module, std::vector<std::int64_t> tensors) {
    const std::int64_t bytes = sum(tensors);
    return {std::move(module), bytes, std::move(tensors)};
}

std::vector<std::int64_t> tensors_of(const ModuleBytes& module) {
    const std::int64_t listed = sum(module.tensors);
    if (listed == module.bytes) {
        return module.tensors;
    }
    if (listed < module.bytes || module.bytes <= 0) {
        return module.bytes > 0 ? Tensors{module.bytes} : Tensors{};
    }
    // Fewer bytes than listed: a share of the tensors is kept in 16 bits. Those are halved,
    // largest first (autocast's matrix products make the widest ones), until the bytes agree.
    Tensors tensors = module.tensors;
    std::vector<std::size_t> order(tensors.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
        order[i] = i;
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return tensors[a] > tensors[b]; });
    std::int64_t excess = listed - module.bytes;
    for (const std::size_t i : order) {
        const std::int64_t saved = std::min(excess, tensors[i] / 2);
        tensors[i] -= saved;
        excess -= saved;
    }
    tensors.back() -= std::min(excess, tensors.back());
    return tensors;
}

std::vector<ModuleBytes> parameters_by_module(const ExperimentConfig& config, int embedding_dim,
                                              int num_classes) {
    const ModelConfig& m = config.model;
    std::vector<ModuleBytes> modules;
    switch (m.kind) {
        case ModelKind::Bag:
            modules = {made_of("pooling", {}), made_of("hidden", linear(embedding_dim, m.hidden)),
                       made_of("output", linear(m.hidden, num_classes))};
            break;
        case ModelKind::BiLstm:
            for (int layer = 0; layer < m.layers; ++layer) {
                const std::int64_t in = layer == 0 ? embedding_dim : 2 * m.hidden;
                // Two directions: input and hidden weights and their two biases.
                const Tensors direction = {4LL * m.hidden * in, 4LL * m.hidden * m.hidden,
                                           4LL * m.hidden, 4LL * m.hidden};
                modules.push_back(
                    made_of("lstm layer " + std::to_string(layer + 1), direction + direction));
            }
            modules.push_back(made_of("head", linear(2 * m.hidden, num_classes)));
            break;
        case ModelKind::Transformer: {
            const std::int64_t d = m.d_model;
            const Tensors positions = {std::int64_t(config.train.max_len) * d};
            modules.push_back(made_of("projection", linear(embedding_dim, d) + positions));
            for (int layer = 0; layer < m.layers; ++layer) {
                modules.push_back(
                    made_of("block " + std::to_string(layer + 1), block_parameters(m)));
            }
            modules.push_back(made_of("head", layer_norm(d) + linear(d, num_classes)));
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
    const auto pooling = [&](std::int64_t width) {
        return Tensors{bl * kFloat, b * width * kFloat, b * width * kFloat};
    };

    std::vector<ModuleBytes>& modules = result.saved_by_module;
    switch (m.kind) {
        case ModelKind::Bag: {
            modules = {made_of("embeddings", {lookup}), made_of("pooling", pooling(embedding_dim)),
                       made_of("hidden", times(dropout ? 4 : 2, b * m.hidden * kFloat)),
                       made_of("output", {})};
            // The pooling's forward makes the masked product, its backward the gradient of
            // the looked-up rows.
            result.temporaries = {{"pooling", {lookup, lookup, lookup, {}}},
                                  {"hidden", {0, 0, b * embedding_dim * kFloat, {}}},
                                  {"output", {0, 0, b * m.hidden * kFloat, {}}}};
            result.forward_transient_in = "pooling";
            result.backward_starts_in = "pooling";
            result.backward_ends_in = "pooling";
            break;
        }
        case ModelKind::BiLstm: {
            const std::int64_t h = m.hidden;
            // Both LSTMs run in the autocast type: the CPU's fused one (model/lstm_layer.h)
            // and cuDNN's on CUDA (estimator/cudnn_lstm.h).
            const std::int64_t element = config.memory.precision == DType::Fp32 ? kFloat : 2;
            const std::int64_t states = bl * 2 * h * element;  // [L, B, 2H], both directions
            const std::int64_t hidden_state = 2 * b * h;       // [2, B, H] elements
            // The looked-up rows are not kept: the first layer keeps its input (on the CPU its
            // own time-major copy, with cuDNN the rows or their autocast copy).
            modules.push_back(made_of("embeddings", {}));
            const std::vector<ModuleBytes> weights =
                parameters_by_module(config, embedding_dim, num_classes);
            for (int layer = 1; layer <= m.layers; ++layer) {
                const std::int64_t in = layer == 1 ? embedding_dim : 2 * h;
                const std::int64_t input_weights = 4 * h * in;  // one direction's, elements
                const bool last = layer == m.layers;
                const Tensors input = times(layer == 1 ? 1 : 0, bl * embedding_dim * element);
                const std::string name = "lstm layer " + std::to_string(layer);
                if (config.on_cuda()) {
                    // cuDNN keeps its reserve and the initial states (zeros in float32, and
                    // their autocast copies) for backward; the dropout's mask is one byte an
                    // element. Forward makes a time-major copy of a batch-first input (the
                    // first layer's: the later ones read the earlier one's time-major output)
                    // beside its workspace and final states. Backward holds the zero
                    // gradients of those states, a time-major copy of the output's gradient,
                    // the input's copy again, the initial states' gradients and the
                    // workspace, and in 16 bits the weights' gradient in that type, cast to
                    // float32 once it is complete.
                    const estimator::CudnnLstmBuffers cudnn =
                        estimator::cudnn_lstm_buffers({b, l, in, h, element});
                    const std::int64_t copy = layer == 1 ? bl * in * element : 0;
                    const Tensors initial =
                        times(2, hidden_state * kFloat) +
                        times(element == kFloat ? 0 : 2, hidden_state * element);
                    const Tensors output =
                        Tensors{states} +
                        (!last && dropout ? Tensors{states / element, states} : Tensors{});
                    modules.push_back(
                        made_of(name, Tensors{cudnn.reserve} + initial + output + input));
                    const std::int64_t weight_gradient =
                        element == kFloat ? 0 : weights[std::size_t(layer - 1)].bytes * element;
                    result.temporaries[name] = {
                        copy + cudnn.workspace + 2 * hidden_state * element, 0,
                        layer == 1 ? lookup : states,
                        times(4, hidden_state * element) +
                            Tensors{states, copy, cudnn.workspace, weight_gradient}};
                    // Beside the workspace (the same size in evaluation) only the layer's
                    // input, output and initial states.
                    result.forward_transient_beside =
                        (layer == 1 ? lookup : states) + states + 2 * hidden_state * kFloat;
                    continue;
                }
                // Every step's activated gates, cells and their tanh, for both directions.
                const Tensors buffers = {bl * 8 * h * element, states, states};
                // Each layer's output (its hidden states), with the dropout mask and output
                // the next layer reads.
                const Tensors output = times(!last && dropout ? 3 : 1, states);
                modules.push_back(made_of(name, buffers + output + input));
                // Forward sets both directions' input weights side by side. Backward writes the
                // gates' gradient over the gates; the last layer holds a time-major copy of its
                // output's gradient while it makes its input's and its weights' gradients. In
                // 16 bits, ATen's products make their result in float32 first: the input's
                // gradient's, or later, beside the first direction's weight gradients, the
                // second's input weights' (whichever is larger).
                const std::int64_t in_16_bits =
                    !last || element == kFloat
                        ? 0
                        : std::max(bl * in * kFloat,
                                   (weights[std::size_t(layer - 1)].bytes / 2 + input_weights) *
                                           element +
                                       input_weights * kFloat);
                result.temporaries[name] = {2 * input_weights * element, in_16_bits,
                                            layer == 1 ? lookup : states,
                                            times(last ? 1 : 0, states)};
            }
            modules.push_back(made_of("head", pooling(2 * h)));
            // The head's backward is done, but for its input's gradient, which the last layer
            // reads.
            result.temporaries["head"].input_gradient = states;
            result.at_backward_start = modules;
            result.at_backward_start[std::size_t(m.layers) + 1].bytes = states;
            result.gradients_done.push_back("head");
            if (element == kFloat) {
                // With autocast the peak comes before the weights' gradients.
                result.gradient_in_progress = {"lstm layer " + std::to_string(m.layers),
                                               weights[std::size_t(m.layers - 1)].bytes,
                                               {}};
            }
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
            const Tensors block_tensors = times(dropout ? 10 : 8, bl * d * kFloat) +
                                          times(2, bl * m.ffn * kFloat) +
                                          times(dropout ? 3 : 1, attention_map);
            std::int64_t block = sum(block_tensors);
            const bool half = config.memory.precision != DType::Fp32;
            const auto in_precision = [&](std::int64_t bytes) {
                return half ? bytes - static_cast<std::int64_t>(bytes *
                                                                kTransformerHalfPrecisionShare / 2)
                            : bytes;
            };
            block = in_precision(block);
            result.per_block_saved = block;
            // The looked-up rows stay in float32; autocast's projection keeps a 16-bit copy
            // of them beside its own float32 output (its dropout's too).
            modules.push_back(made_of("embeddings", {lookup}));
            modules.push_back(made_of("projection", times(dropout ? 2 : 1, bl * d * kFloat) +
                                                        times(half ? 1 : 0, lookup / 2)));
            const std::int64_t widest = std::max(attention_map, bl * m.ffn * kFloat);
            const bool checkpointing = config.memory.checkpointing == Checkpointing::Layers;
            const ModuleBytes whole_block = {"", block, block_tensors};
            for (int layer = 1; layer <= m.layers; ++layer) {
                // Checkpointed, only each block's input stays; backward recomputes one block
                // at a time.
                const std::string name = "block " + std::to_string(layer);
                modules.push_back(checkpointing ? made_of(name, {bl * d * kFloat})
                                                : ModuleBytes{name, block, block_tensors});
                result.temporaries[name] = {widest, widest, bl * d * kFloat,
                                            checkpointing ? tensors_of(whole_block) : Tensors{}};
            }
            result.temporaries["projection"].input_gradient = lookup;
            result.temporaries["head"].input_gradient = bl * d * kFloat;
            const Tensors head = Tensors{bl * d * kFloat} + pooling(d);
            modules.push_back({"head", in_precision(sum(head)), head});
            result.forward_transient_in = "block " + std::to_string(m.layers);
            result.backward_ends_in = "projection";
            // Backward peaks in the last block, as the first weight gradients (the head's, the
            // block's output layer's) appear beside every saved tensor. Checkpointed, it
            // recomputes one block at a time: the last, beside every block's kept input, or the
            // first, once every later block's gradients exist, whichever the model's shapes
            // make larger (a block's weights against its input). The head has passed on its
            // input's gradient (float32 only: with autocast it is gone by then). Accumulating,
            // every gradient exists from the start: then the last block.
            const std::int64_t block_weights = sum(block_parameters(m)) * kFloat;
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
                result.gradient_in_progress = {
                    result.backward_starts_in, sum(linear(m.ffn, d)), {}};
            }
            break;
        }
    }
    result.temporaries["loss"].input_gradient = b * num_classes * kFloat;  // of the logits
    // Logits, log-softmax, their gradient.
    modules.push_back(made_of("loss", times(3, b * num_classes * kFloat)));
    result.saved = total_bytes(modules);
    // The phases' temporaries are those of the modules where the phases peak.
    result.forward_transient = result.temporaries.at(result.forward_transient_in).forward;
    const ModuleTemporaries& backward = result.temporaries.at(result.backward_starts_in);
    result.backward_transient = backward.backward + sum(backward.held);
    if (m.kind == ModelKind::BiLstm) {
        // The fused LSTM makes its input's gradient before it frees its gates'.
        result.backward_transient += backward.input_gradient;
    }
    if (result.forward_transient_beside == 0) {
        result.forward_transient_beside = result.forward_transient;
    }
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
        result.at_backward_start.push_back({"loss", 0, {}});  // backward began there
    }
    result.at_forward_peak = modules;
    bool later = false;
    for (ModuleBytes& module : result.at_forward_peak) {
        module.bytes = later ? 0 : module.bytes;
        later = later || module.module == result.forward_transient_in;
    }
    if (m.kind == ModelKind::BiLstm && m.layers == 1) {
        // The looked-up rows are the first layer's input until it returns: with one layer,
        // alive where forward peaks.
        result.at_forward_peak.front().bytes = lookup;
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
