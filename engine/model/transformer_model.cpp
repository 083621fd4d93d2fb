// Word vectors projected to d_model, learned positions, a stack of encoder blocks, mean pooling.
#include "encoder_block.h"
#include "oomlab/model/text_classifier.h"

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

        m_embeddings_id = add_memory_module("embeddings", {m_embeddings.ptr()},
                                            /*backward_reads_parameters=*/false);
        m_projection_id = add_memory_module("projection", {m_projection.ptr(), m_positions.ptr()});
        for (std::size_t layer = 0; layer < m_blocks.size(); ++layer) {
            m_block_ids.push_back(
                add_memory_module("block " + std::to_string(layer + 1), {m_blocks[layer].ptr()}));
        }
        m_head_id = add_memory_module("head", {m_final_norm.ptr(), m_output.ptr()});
    }

    torch::Tensor forward(const torch::Tensor& ids, const torch::Tensor& mask) override {
        const torch::Tensor positions =
            torch::arange(ids.size(1), ids.options().dtype(torch::kLong)).unsqueeze(0);
        const torch::Tensor vectors =
            run_part(m_embeddings_id, [&] { return m_embeddings->forward(ids); });
        torch::Tensor x = run_part(m_projection_id, [&] {
            return m_dropout->forward(m_projection->forward(vectors) +
                                      m_positions->forward(positions));
        });
        for (std::size_t layer = 0; layer < m_blocks.size(); ++layer) {
            EncoderBlock& block = m_blocks[layer];
            x = run_part(m_block_ids[layer], [&] {
                return m_checkpointing ? checkpointed_forward(block, x, mask)
                                       : block->forward(x, mask);
            });
        }
        return run_part(m_head_id, [&] {
            return m_output->forward(masked_mean(m_final_norm->forward(x), mask));
        });
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
    memory::ModuleId m_embeddings_id;
    memory::ModuleId m_projection_id;
    std::vector<memory::ModuleId> m_block_ids;
    memory::ModuleId m_head_id;
};

}  // namespace

std::shared_ptr<TextClassifier> make_transformer_model(const torch::Tensor& initial_embeddings,
                                                       const ExperimentConfig& config,
                                                       int num_classes) {
    return std::make_shared<TransformerModel>(initial_embeddings, config, num_classes);
}

}  // namespace oomlab::model
