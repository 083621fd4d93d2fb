// Mean-pooled word vectors and a two-layer MLP: the classic GloVe baseline.
#include "oomlab/model/text_classifier.h"

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
          m_output(register_module("output", torch::nn::Linear(config.model.hidden, num_classes))),
          m_embeddings_id(add_memory_module("embeddings", {m_embeddings.ptr()},
                                            /*backward_reads_parameters=*/false)),
          m_pooling_id(add_memory_module("pooling", {})),
          m_hidden_id(add_memory_module("hidden", {m_hidden.ptr()})),
          m_output_id(add_memory_module("output", {m_output.ptr()})) {}

    torch::Tensor forward(const torch::Tensor& ids, const torch::Tensor& mask) override {
        const torch::Tensor vectors =
            run_part(m_embeddings_id, [&] { return m_embeddings->forward(ids); });
        const torch::Tensor pooled =
            run_part(m_pooling_id, [&] { return masked_mean(vectors, mask); });
        const torch::Tensor hidden = run_part(m_hidden_id, [&] {
            return m_dropout->forward(torch::relu(m_hidden->forward(pooled)));
        });
        return run_part(m_output_id, [&] { return m_output->forward(hidden); });
    }

    EmbeddingTable& embeddings() override { return m_embeddings; }

private:
    EmbeddingTable m_embeddings;
    torch::nn::Linear m_hidden;
    torch::nn::Dropout m_dropout;
    torch::nn::Linear m_output;
    memory::ModuleId m_embeddings_id;
    memory::ModuleId m_pooling_id;
    memory::ModuleId m_hidden_id;
    memory::ModuleId m_output_id;
};

}  // namespace

std::shared_ptr<TextClassifier> make_bag_model(const torch::Tensor& initial_embeddings,
                                               const ExperimentConfig& config, int num_classes) {
    return std::make_shared<BagModel>(initial_embeddings, config, num_classes);
}

}  // namespace oomlab::model
