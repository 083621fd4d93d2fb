// A bidirectional LSTM over the word vectors, mean-pooled over the real tokens.
#include "model/text_classifier.h"

namespace oomlab::model {
namespace {

class BiLstmModel final : public TextClassifier {
public:
    BiLstmModel(const torch::Tensor& initial_embeddings, const ExperimentConfig& config,
                int num_classes)
        : m_embeddings(
              register_module("embeddings", EmbeddingTable(initial_embeddings, config.embeddings))),
          m_lstm(register_module(
              "lstm",
              torch::nn::LSTM(torch::nn::LSTMOptions(m_embeddings->dim(), config.model.hidden)
                                  .num_layers(config.model.layers)
                                  .bidirectional(true)
                                  .batch_first(true)
                                  .dropout(config.model.layers > 1 ? config.model.dropout : 0.0)))),
          m_dropout(register_module("dropout", torch::nn::Dropout(config.model.dropout))),
          m_output(
              register_module("output", torch::nn::Linear(2 * config.model.hidden, num_classes))) {}

    torch::Tensor forward(const torch::Tensor& ids, const torch::Tensor& mask) override {
        const torch::Tensor states = std::get<0>(m_lstm->forward(m_embeddings->forward(ids)));
        return m_output->forward(m_dropout->forward(masked_mean(states, mask)));
    }

    EmbeddingTable& embeddings() override { return m_embeddings; }

private:
    EmbeddingTable m_embeddings;
    torch::nn::LSTM m_lstm;
    torch::nn::Dropout m_dropout;
    torch::nn::Linear m_output;
};

}  // namespace

std::shared_ptr<TextClassifier> make_bilstm_model(const torch::Tensor& initial_embeddings,
                                                  const ExperimentConfig& config, int num_classes) {
    return std::make_shared<BiLstmModel>(initial_embeddings, config, num_classes);
}

}  // namespace oomlab::model
