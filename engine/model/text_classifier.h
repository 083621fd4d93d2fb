// The classifiers: token ids in, class logits out. Each model owns its embedding table.
#pragma once

#include <torch/nn.h>

#include <memory>
#include <string>
#include <vector>

#include "memory/module_scope.h"
#include "oomlab/config/experiment_config.h"

namespace oomlab::model {

// The embedding table: pre-trained rows, optionally frozen, sparse, 16-bit, or kept on the
// host (then only the looked-up rows travel to the compute device).
class EmbeddingTableImpl : public torch::nn::Module {
public:
    EmbeddingTableImpl(const torch::Tensor& initial_weights, const EmbeddingsConfig& config);
    // ids: [B, L] int64 on the compute device. Returns [B, L, D] float32 on that device.
    torch::Tensor forward(const torch::Tensor& ids);
    const torch::Tensor& weight() const { return m_weight; }
    int dim() const { return static_cast<int>(m_weight.size(1)); }

private:
    torch::Tensor m_weight;
    bool m_sparse = false;
    bool m_on_host = false;
};
TORCH_MODULE(EmbeddingTable);

// A part of a model that memory is attributed to: its name as reports show it ("embeddings",
// "block 1", "head"; the estimator predicts the same names) and the parameters it owns.
struct MemoryModule {
    std::string name;
    memory::ModuleId id = memory::kNoModule;
    std::vector<torch::Tensor> parameters;
};

class TextClassifier : public torch::nn::Module {
public:
    // ids: [B, L] int64; mask: [B, L] bool, true for real tokens. Returns [B, classes].
    virtual torch::Tensor forward(const torch::Tensor& ids, const torch::Tensor& mask) = 0;
    virtual EmbeddingTable& embeddings() = 0;
    // Recompute encoder blocks in backward (models without blocks ignore it).
    virtual void set_checkpointing(bool /*enabled*/) {}
    // The parts memory is attributed to, in forward order; together they own every parameter.
    const std::vector<MemoryModule>& memory_modules() const { return m_memory_modules; }

protected:
    // Declares the next part, made of `parts` (registered submodules); forward runs it
    // through attributed() with the id returned.
    memory::ModuleId add_memory_module(
        const std::string& name, const std::vector<std::shared_ptr<torch::nn::Module>>& parts);

private:
    std::vector<MemoryModule> m_memory_modules;
};

// Runs `forward` as module `id`: what it allocates counts for that module, and so does its
// backward, through a hook on its output that autograd calls just before entering the module.
template <typename Forward>
torch::Tensor attributed(memory::ModuleId id, Forward&& forward) {
    const memory::ModuleScope scope(id);
    torch::Tensor output = std::forward<Forward>(forward)();
    if (output.requires_grad()) {
        output.register_hook([id](const torch::Tensor&) { memory::set_current_module(id); });
    }
    return output;
}

// Mean of `values` [B, L, D] over the positions where `mask` [B, L] is true.
torch::Tensor masked_mean(const torch::Tensor& values, const torch::Tensor& mask);

std::shared_ptr<TextClassifier> make_classifier(const ExperimentConfig& config,
                                                const torch::Tensor& initial_embeddings,
                                                int num_classes);

}  // namespace oomlab::model
