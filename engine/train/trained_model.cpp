#include "trained_model.h"

#include "optimizer_factory.h"

namespace oomlab::train {

std::vector<torch::Tensor> TrainedModel::optimizer_state_for(const torch::Tensor& parameter) const {
    if (!optimizer) {
        return {};
    }
    if (!parallel) {
        return optimizer_state_of(*optimizer, parameter);
    }
    std::vector<torch::Tensor> state;
    for (const torch::Tensor& view : parallel->optimizer_tensors_of(parameter)) {
        for (torch::Tensor& tensor : optimizer_state_of(*optimizer, view)) {
            state.push_back(std::move(tensor));
        }
    }
    return state;
}

bool TrainedModel::has_dense_gradient(const torch::Tensor& parameter, bool sparse_table) const {
    return parameter.requires_grad() &&
           !(sparse_table && parameter.is_same(model->embeddings()->weight()));
}

void TrainedModel::drop_gradients() {
    if (!model) {
        return;
    }
    for (auto& parameter : model->parameters()) {
        parameter.mutable_grad() = torch::Tensor();
    }
}

}  // namespace oomlab::train
