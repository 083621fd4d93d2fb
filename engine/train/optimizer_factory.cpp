#include "train/optimizer_factory.h"

namespace oomlab::train {
namespace {

constexpr double kMomentum = 0.9;
constexpr double kAdamWDecay = 0.01;

std::int64_t tensor_bytes(const torch::Tensor& tensor) {
    return tensor.defined() ? static_cast<std::int64_t>(tensor.nbytes()) : 0;
}

}  // namespace

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const TrainConfig& config,
                                                        const std::vector<torch::Tensor>& params) {
    namespace optim = torch::optim;
    switch (config.optimizer) {
        case OptimizerKind::Sgd:
            return std::make_unique<optim::SGD>(params, optim::SGDOptions(config.lr));
        case OptimizerKind::Momentum:
            return std::make_unique<optim::SGD>(params,
                                                optim::SGDOptions(config.lr).momentum(kMomentum));
        case OptimizerKind::Adam:
            return std::make_unique<optim::Adam>(params, optim::AdamOptions(config.lr));
        case OptimizerKind::AdamW:
            return std::make_unique<optim::AdamW>(
                params, optim::AdamWOptions(config.lr).weight_decay(kAdamWDecay));
        case OptimizerKind::Adagrad:
            return std::make_unique<optim::Adagrad>(params, optim::AdagradOptions(config.lr));
    }
    return nullptr;
}

std::int64_t optimizer_state_bytes(const torch::optim::Optimizer& optimizer) {
    namespace optim = torch::optim;
    std::int64_t bytes = 0;
    for (const auto& entry : optimizer.state()) {
        const optim::OptimizerParamState* state = entry.second.get();
        if (const auto* adam = dynamic_cast<const optim::AdamParamState*>(state)) {
            bytes += tensor_bytes(adam->exp_avg()) + tensor_bytes(adam->exp_avg_sq()) +
                     tensor_bytes(adam->max_exp_avg_sq());
        } else if (const auto* adamw = dynamic_cast<const optim::AdamWParamState*>(state)) {
            bytes += tensor_bytes(adamw->exp_avg()) + tensor_bytes(adamw->exp_avg_sq()) +
                     tensor_bytes(adamw->max_exp_avg_sq());
        } else if (const auto* sgd = dynamic_cast<const optim::SGDParamState*>(state)) {
            bytes += tensor_bytes(sgd->momentum_buffer());
        } else if (const auto* adagrad = dynamic_cast<const optim::AdagradParamState*>(state)) {
            bytes += tensor_bytes(adagrad->sum());
        }
    }
    return bytes;
}

}  // namespace oomlab::train
