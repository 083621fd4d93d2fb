// A bidirectional LSTM over the word vectors, mean-pooled over the real tokens.
#include "lstm_layer.h"
#include "oomlab/model/text_classifier.h"

namespace oomlab::model {
namespace {

class BiLstmModel final : public TextClassifier {
public:
    BiLstmModel(const torch::Tensor& initial_embeddings, const ExperimentConfig& config,
                int num_classes)
        : m_embeddings(register_module("embeddings",
                                       EmbeddingTable(initial_embeddings, config.embeddings))) {
        // One bidirectional layer per module (as torch's num_layers would stack them, dropout
        // between layers), so that each layer's memory can be told apart.
        m_embeddings_id = add_memory_module("embeddings", {m_embeddings.ptr()},
                                            /*backward_reads_parameters=*/false);
        for (int layer = 0; layer < config.model.layers; ++layer) {
            const int input = layer == 0 ? m_embeddings->dim() : 2 * config.model.hidden;
            m_layers.push_back(
                register_module("lstm" + std::to_string(layer),
                                torch::nn::LSTM(torch::nn::LSTMOptions(input, config.model.hidden)
                                                    .bidirectional(true)
                                                    .batch_first(true))));
            m_layer_ids.push_back(add_memory_module("lstm layer " + std::to_string(layer + 1),
                                                    {m_layers.back().ptr()}));
        }
        m_dropout = register_module("dropout", torch::nn::Dropout(config.model.dropout));
        m_output =
            register_module("output", torch::nn::Linear(2 * config.model.hidden, num_classes));
        m_head_id = add_memory_module("head", {m_output.ptr()});
    }

    torch::Tensor forward(const torch::Tensor& ids, const torch::Tensor& mask) override {
        torch::Tensor states =
            run_part(m_embeddings_id, [&] { return m_embeddings->forward(ids); });
        for (std::size_t layer = 0; layer < m_layers.size(); ++layer) {
            states = run_part(m_layer_ids[layer], [&] {
                // On a GPU, cuDNN's LSTM; on the CPU, one fused function in place of ATen's
                // step-by-step graph (see lstm_layer.h).
                torch::Tensor output = states.is_cpu()
                                           ? bidirectional_lstm(m_layers[layer], states)
                                           : std::get<0>(m_layers[layer]->forward(states));
                return layer + 1 < m_layers.size() ? m_dropout->forward(output) : output;
            });
        }
        return run_part(m_head_id, [&] {
            return m_output->forward(m_dropout->forward(masked_mean(states, mask)));
        });
    }

    EmbeddingTable& embeddings() override { return m_embeddings; }

private:
    EmbeddingTable m_embeddings;
    std::vector<torch::nn::LSTM> m_layers;
    torch::nn::Dropout m_dropout{nullptr};
    torch::nn::Linear m_output{nullptr};
    memory::ModuleId m_embeddings_id = memory::kNoModule;
    std::vector<memory::ModuleId> m_layer_ids;
    memory::ModuleId m_head_id = memory::kNoModule;
};

}  // namespace

std::shared_ptr<TextClassifier> make_bilstm_model(const torch::Tensor& initial_embeddings,
                                                  const ExperimentConfig& config, int num_classes) {
    return std::make_shared<BiLstmModel>(initial_embeddings, config, num_classes);
}

}  // namespace oomlab::model
