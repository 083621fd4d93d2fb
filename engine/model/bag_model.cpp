// Mean-pooled word vectors and a two-layer MLP: the classic GloVe baseline.
#include "model/text_classifier.h"

namespace oomlab::model {
namespace {

class BagModel final : public TextClassifier {
public:
    BagModel(const torch::Tensor& initial_embeddings, const ExperimentConfig& config,
             int num_classes)
        : m_embeddings(
              register_module("embeddings", EmbeddingTable(initial_embeddings, config.embeddings))),
          m_hidden(register_module("hidden",
                                   torch::nn::Linear(m_embeddings->dim(), config.model.hidden))),
          m_dropout(register_module("dropout", torch::nn::Dropout(config.model.dropout))),
          m_output(register_module("output", torch::nn::Linear(config.model.hidden, num_classes))) {
    }

    torch::Tensor forward(const torch::Tensor& ids, const torch::Tensor& mask) override {
        const torch::Tensor pooled = masked_mean(m_embeddings->forward(ids), mask);
        return m_output->forward(m_dropout->forward(torch::relu(m_hidden->forward(pooled))));
    }

    EmbeddingTable& embeddings() override { return m_embeddings; }

private:
    EmbeddingTable m_embeddings;
    torch::nn::Linear m_hidden;
    torch::nn::Dropout m_dropout;
    torch::nn::Linear m_output;
};

}  // namespace

std::shared_ptr<TextClassifier> make_bag_model(const torch::Tensor& initial_embeddings,
                                               const ExperimentConfig& config, int num_classes) {
    return std::make_shared<BagModel>(initial_embeddings, config, num_classes);
}

}  // namespace oomlab::model
