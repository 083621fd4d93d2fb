#pragma once

#include <torch/optim.h>

#include <memory>

#include "oomlab/config/experiment_config.h"

namespace oomlab::train {

// The optimizer of `train.optimizer` over the parameters that need gradients.
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const TrainConfig& config,
                                                        const std::vector<torch::Tensor>& params);

// Bytes of the optimizer's state tensors (momentum buffers, Adam's moments, ...).
std::int64_t optimizer_state_bytes(const torch::optim::Optimizer& optimizer);

}  // namespace oomlab::train
