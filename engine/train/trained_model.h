// What a run trains: the classifier, its optimizer and what that optimizer updates, fp16's
// loss scaler, and the data-parallel side when several processes train it.
#pragma once

#include <torch/nn.h>
#include <torch/optim.h>

#include <memory>
#include <optional>
#include <vector>

#include "data_parallel.h"
#include "grad_scaler.h"
#include "oomlab/model/text_classifier.h"

namespace oomlab::train {

struct TrainedModel {
    std::shared_ptr<model::TextClassifier> model;
    std::vector<torch::Tensor> trainable;  // the model's parameters that require a gradient
    std::vector<torch::Tensor> updated;    // what the optimizer updates (a rank's shard, sharded)
    std::unique_ptr<torch::optim::Optimizer> optimizer;
    std::optional<GradScaler> scaler;        // fp16 only
    std::unique_ptr<DataParallel> parallel;  // several processes only

    // The optimizer's state for `parameter`: for this rank's views of it, when sharded.
    std::vector<torch::Tensor> optimizer_state_for(const torch::Tensor& parameter) const;
    // Whether `parameter` has a dense gradient during a step: every trainable parameter but a
    // table whose gradients are sparse (embeddings.sparse_grad).
    bool has_dense_gradient(const torch::Tensor& parameter, bool sparse_table) const;
    // Sets every gradient to none, as PyTorch 2's zero_grad does, rather than zeroing them.
    void drop_gradients();
};

}  // namespace oomlab::train
