// Word vectors projected to d_model, learned positions, a stack of encoder blocks, mean pooling.
#include "model/encoder_block.h"
#include "model/text_classifier.h"

namespace oomlab::model {
namespace {

class TransformerModel final : public TextClassifier {
public:
    TransformerModel(const torch::Tensor& initial_embeddings, const ExperimentConfig& config,
                     int num_classes)
        : m_embeddings(register_module("embeddings",
                                       EmbeddingTable(initial_embeddings, config.embeddings))) {
        const ModelConfig& shape = config.model;
        m_projection =
            register_module("projection", torch::nn::Linear(m_embeddings->dim(), shape.d_model));
        m_positions =
            register_module("positions", torch::nn::Embedding(config.train.max_len, shape.d_model));
        m_dropout = register_module("dropout", torch::nn::Dropout(shape.dropout));
        for (int layer = 0; layer < shape.layers; ++layer) {
            m_blocks.push_back(register_module(
                "block" + std::to_string(layer),
                EncoderBlock(shape.d_model, shape.heads, shape.ffn, shape.dropout)));
        }
        m_final_norm = register_module(
            "final_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({shape.d_model})));
        m_output = register_module("output", torch::nn::Linear(shape.d_model, num_classes));
    }

    torch::Tensor forward(const torch::Tensor& ids, const torch::Tensor& mask) override {
        const torch::Tensor positions =
            torch::arange(ids.size(1), ids.options().dtype(torch::kLong)).unsqueeze(0);
        torch::Tensor x =
            m_projection->forward(m_embeddings->forward(ids)) + m_positions->forward(positions);
        x = m_dropout->forward(x);
        for (auto& block : m_blocks) {
            x = m_checkpointing ? checkpointed_forward(block, x, mask) : block->forward(x, mask);
        }
        return m_output->forward(masked_mean(m_final_norm->forward(x), mask));
    }

    EmbeddingTable& embeddings() override { return m_embeddings; }
    void set_checkpointing(bool enabled) override { m_checkpointing = enabled; }

private:
    EmbeddingTable m_embeddings;
    torch::nn::Linear m_projection{nullptr};
    torch::nn::Embedding m_positions{nullptr};
    torch::nn::Dropout m_dropout{nullptr};
    std::vector<EncoderBlock> m_blocks;
    torch::nn::LayerNorm m_final_norm{nullptr};
    torch::nn::Linear m_output{nullptr};
    bool m_checkpointing = false;
};

}  // namespace

std::shared_ptr<TextClassifier> make_transformer_model(const torch::Tensor& initial_embeddings,
                                                       const ExperimentConfig& config,
                                                       int num_classes) {
    return std::make_shared<TransformerModel>(initial_embeddings, config, num_classes);
}

}  // namespace oomlab::model
