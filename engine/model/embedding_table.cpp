#include "oomlab/model/text_classifier.h"

#include <torch/nn/functional/embedding.h>

#include <stdexcept>
#include <string>

namespace oomlab::model {
namespace {

torch::Dtype storage_type(DType dtype) {
    switch (dtype) {
        case DType::Fp16:
            return torch::kHalf;
        case DType::Bf16:
            return torch::kBFloat16;
        default:
            return torch::kFloat32;
    }
}

}  // namespace

EmbeddingTableImpl::EmbeddingTableImpl(const torch::Tensor& initial_weights,
                                       const EmbeddingsConfig& config)
    : m_sparse(config.sparse_grad), m_on_host(config.placement == EmbeddingPlacement::Cpu) {
    // Always a copy: training must never write into the prepared rows (the next run starts
    // from them), and the copy is what the run's memory accounting should see.
    m_weight = register_parameter(
        "weight",
        initial_weights.to(storage_type(config.dtype), /*non_blocking=*/false, /*copy=*/true),
        config.trainable);
}

torch::Tensor EmbeddingTableImpl::forward(const torch::Tensor& ids) {
    namespace F = torch::nn::functional;
    const auto options = F::EmbeddingFuncOptions().padding_idx(0).sparse(m_sparse);
    if (m_on_host && ids.device() != m_weight.device()) {
        // Look up on the host, then move only the rows this batch uses.
        const torch::Tensor rows = F::embedding(ids.to(m_weight.device()), m_weight, options);
        return rows.to(ids.device(), torch::kFloat32, /*non_blocking=*/true);
    }
    return F::embedding(ids, m_weight, options).to(torch::kFloat32);
}

memory::ModuleId TextClassifier::add_memory_module(
    const std::string& name, const std::vector<std::shared_ptr<torch::nn::Module>>& parts,
    bool backward_reads_parameters) {
    MemoryModule& module = m_memory_modules.emplace_back();
    module.name = name;
    module.id = memory::module_id(name);
    module.backward_reads_parameters = backward_reads_parameters;
    for (const auto& part : parts) {
        for (const auto& parameter : part->parameters()) {
            module.parameters.push_back(parameter);
        }
    }
    return module.id;
}

const MemoryModule& TextClassifier::memory_module(memory::ModuleId id) const {
    for (const MemoryModule& module : m_memory_modules) {
        if (module.id == id) {
            return module;
        }
    }
    throw std::logic_error("no part of the model has module id " + std::to_string(id));
}

torch::Tensor masked_mean(const torch::Tensor& values, const torch::Tensor& mask) {
    const torch::Tensor weights = mask.unsqueeze(-1).to(values.scalar_type());
    const torch::Tensor counts = weights.sum(1).clamp_min(1.0);
    return (values * weights).sum(1) / counts;
}

}  // namespace oomlab::model
