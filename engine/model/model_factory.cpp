#include "oomlab/model/text_classifier.h"

namespace oomlab::model {

std::shared_ptr<TextClassifier> make_bag_model(const torch::Tensor&, const ExperimentConfig&, int);
std::shared_ptr<TextClassifier> make_bilstm_model(const torch::Tensor&, const ExperimentConfig&,
                                                  int);
std::shared_ptr<TextClassifier> make_transformer_model(const torch::Tensor&,
                                                       const ExperimentConfig&, int);

std::shared_ptr<TextClassifier> make_classifier(const ExperimentConfig& config,
                                                const torch::Tensor& initial_embeddings,
                                                int num_classes) {
    std::shared_ptr<TextClassifier> model;
    switch (config.model.kind) {
        case ModelKind::Bag:
            model = make_bag_model(initial_embeddings, config, num_classes);
            break;
        case ModelKind::BiLstm:
            model = make_bilstm_model(initial_embeddings, config, num_classes);
            break;
        case ModelKind::Transformer:
            model = make_transformer_model(initial_embeddings, config, num_classes);
            break;
    }
    model->set_checkpointing(config.memory.checkpointing == Checkpointing::Layers);
    return model;
}

}  // namespace oomlab::model
