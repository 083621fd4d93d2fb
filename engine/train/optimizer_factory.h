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

// The state tensors kept for one parameter (undefined ones included; none before its first
// update).
std::vector<torch::Tensor> optimizer_state_of(const torch::optim::Optimizer& optimizer,
                                              const torch::Tensor& parameter);

}  // namespace oomlab::train
