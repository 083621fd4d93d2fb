#include "optimizer_factory.h"

#include "oomlab/torch_utils/tensor_bytes.h"
#include "oomlab/torch_utils/torch_compat.h"

namespace oomlab::train {
namespace {

constexpr double kMomentum = 0.9;
constexpr double kAdamWDecay = 0.01;

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

namespace {

std::vector<torch::Tensor> state_tensors(const torch::optim::OptimizerParamState* state) {
    namespace optim = torch::optim;
    if (const auto* adam = dynamic_cast<const optim::AdamParamState*>(state)) {
        return {adam->exp_avg(), adam->exp_avg_sq(), adam->max_exp_avg_sq()};
    }
    if (const auto* adamw = dynamic_cast<const optim::AdamWParamState*>(state)) {
        return {adamw->exp_avg(), adamw->exp_avg_sq(), adamw->max_exp_avg_sq()};
    }
    if (const auto* sgd = dynamic_cast<const optim::SGDParamState*>(state)) {
        return {sgd->momentum_buffer()};
    }
    if (const auto* adagrad = dynamic_cast<const optim::AdagradParamState*>(state)) {
        return {adagrad->sum()};
    }
    return {};
}

}  // namespace

std::int64_t optimizer_state_bytes(const torch::optim::Optimizer& optimizer) {
    std::int64_t bytes = 0;
    for (const auto& entry : optimizer.state()) {
        for (const torch::Tensor& tensor : state_tensors(entry.second.get())) {
            bytes += tensor_bytes(tensor);
        }
    }
    return bytes;
}

std::vector<torch::Tensor> optimizer_state_of(const torch::optim::Optimizer& optimizer,
                                              const torch::Tensor& parameter) {
    using StateMap = std::decay_t<decltype(optimizer.state())>;
    const auto found = optimizer.state().find(compat::optimizer_state_key<StateMap>(parameter));
    return found == optimizer.state().end() ? std::vector<torch::Tensor>{}
                                            : state_tensors(found->second.get());
}

}  // namespace oomlab::train
