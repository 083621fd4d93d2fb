#include "oomlab/model/text_classifier.h"

#include <torch/nn/functional/embedding.h>

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

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

// Symmetric per-row quantization: a row's largest magnitude maps to 127. An all-zero row (the
// padding row) keeps a scale of 1 so that nothing divides by zero. Row by row over the float
// rows, with no float temporaries: a table of millions of rows needs only its int8 copy.
std::pair<torch::Tensor, torch::Tensor> quantized_rows(const torch::Tensor& weights) {
    const torch::Tensor rows = weights.to(torch::kCPU, torch::kFloat32).contiguous();
    const std::int64_t count = rows.size(0);
    const std::int64_t dim = rows.size(1);
    torch::Tensor quantized = torch::empty({count, dim}, torch::kInt8);
    torch::Tensor scales = torch::empty({count, 1}, torch::kFloat32);
    const float* in = rows.data_ptr<float>();
    std::int8_t* out = quantized.data_ptr<std::int8_t>();
    float* scale = scales.data_ptr<float>();
    at::parallel_for(0, count, /*grain_size=*/1024, [&](std::int64_t first, std::int64_t end) {
        for (std::int64_t r = first; r < end; ++r) {
            const float* row = in + r * dim;
            float largest = 0;
            for (std::int64_t d = 0; d < dim; ++d) {
                largest = std::max(largest, std::fabs(row[d]));
            }
            scale[r] = largest > 0 ? largest / 127.0f : 1.0f;
            for (std::int64_t d = 0; d < dim; ++d) {
                const float step = std::nearbyint(row[d] / scale[r]);
                out[r * dim + d] = static_cast<std::int8_t>(std::clamp(step, -127.0f, 127.0f));
            }
        }
    });
    return {quantized, scales};
}

}  // namespace

EmbeddingTableImpl::EmbeddingTableImpl(const torch::Tensor& initial_weights,
                                       const EmbeddingsConfig& config)
    : m_sparse(config.sparse_grad), m_on_host(config.placement == EmbeddingPlacement::Cpu) {
    // Always a copy: training must never write into the prepared rows (the next run starts
    // from them), and the copy is what the run's memory accounting should see.
    if (config.dtype == DType::Int8) {
        // Frozen (the config refuses a trainable int8 table): parameters without gradients,
        // so that moving, counting and attributing the model's memory see them as the table.
        auto [quantized, scales] = quantized_rows(initial_weights);
        m_weight = register_parameter("weight", quantized, /*requires_grad=*/false);
        m_row_scales = register_parameter("row_scales", scales, /*requires_grad=*/false);
        return;
    }
    m_weight = register_parameter(
        "weight",
        initial_weights.to(storage_type(config.dtype), /*non_blocking=*/false, /*copy=*/true),
        config.trainable);
}

torch::Tensor EmbeddingTableImpl::dequantized_rows(const torch::Tensor& ids) {
    const torch::Tensor table_ids = ids.to(m_weight.device());
    const torch::Tensor rows = m_weight.index_select(0, table_ids.flatten());
    const torch::Tensor scales = m_row_scales.index_select(0, table_ids.flatten());
    // Only the int8 rows and their scales travel; the float rows are made where they are used.
    torch::Tensor values = rows.to(ids.device(), /*non_blocking=*/true).to(torch::kFloat32);
    values.mul_(scales.to(ids.device(), /*non_blocking=*/true));
    auto shape = ids.sizes().vec();
    shape.push_back(m_weight.size(1));
    return values.view(shape);
}

torch::Tensor EmbeddingTableImpl::forward(const torch::Tensor& ids) {
    namespace F = torch::nn::functional;
    if (m_row_scales.defined()) {
        return dequantized_rows(ids);
    }
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
