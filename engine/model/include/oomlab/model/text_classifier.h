// The classifiers: token ids in, class logits out. Each model owns its embedding table.
#pragma once

#include <torch/nn.h>

#include <memory>
#include <string>
#include <vector>

#include "oomlab/config/experiment_config.h"
#include "oomlab/snapshot_writer/module_scope.h"

namespace oomlab::model {

// The embedding table: pre-trained rows, optionally frozen, sparse, 16-bit, int8 (frozen: each
// row quantized with an fp32 scale, dequantized per batch), or kept on the host (then only the
// looked-up rows travel to the compute device).
class EmbeddingTableImpl : public torch::nn::Module {
public:
    EmbeddingTableImpl(const torch::Tensor& initial_weights, const EmbeddingsConfig& config);
    // ids: [B, L] int64 on the compute device. Returns [B, L, D] float32 on that device.
    torch::Tensor forward(const torch::Tensor& ids);
    const torch::Tensor& weight() const { return m_weight; }
    // Whether `tensor` is part of the table: its weight, or an int8 table's row scales.
    bool holds(const torch::Tensor& tensor) const {
        return tensor.is_same(m_weight) || (m_row_scales.defined() && tensor.is_same(m_row_scales));
    }
    int dim() const { return static_cast<int>(m_weight.size(1)); }

private:
    // The rows [B, L, D] of an int8 table, dequantized on the device of `ids`.
    torch::Tensor dequantized_rows(const torch::Tensor& ids);

    torch::Tensor m_weight;
    torch::Tensor m_row_scales;  // int8 tables: [rows, 1] float32
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
    // Whether its backward reads its parameters (a table lookup's does not: only the ids).
    bool backward_reads_parameters = true;
};

// Acts around each part's forward and its backward: ZeRO-3 gathers a part's sharded
// parameters before they are read and frees them after.
class PartHooks {
public:
    virtual ~PartHooks() = default;
    virtual void before_forward(const MemoryModule& part) = 0;
    virtual void after_forward(const MemoryModule& part) = 0;
    // Just before autograd enters the part's backward (only where it reads its parameters).
    virtual void before_backward(const MemoryModule& part) = 0;
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
    // Called around every part from now on (nullptr: none); the hooks outlive the model's
    // use or are unset first.
    void set_part_hooks(PartHooks* hooks) { m_part_hooks = hooks; }

protected:
    // Declares the next part, made of `parts` (registered submodules); forward runs it
    // through run_part() with the id returned.
    memory::ModuleId add_memory_module(const std::string& name,
                                       const std::vector<std::shared_ptr<torch::nn::Module>>& parts,
                                       bool backward_reads_parameters = true);

    // Runs `forward` as the part `id`: attributed to it, and between the part hooks.
    template <typename Forward>
    torch::Tensor run_part(memory::ModuleId id, Forward&& forward);

private:
    const MemoryModule& memory_module(memory::ModuleId id) const;

    std::vector<MemoryModule> m_memory_modules;
    PartHooks* m_part_hooks = nullptr;
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

template <typename Forward>
torch::Tensor TextClassifier::run_part(memory::ModuleId id, Forward&& forward) {
    if (!m_part_hooks) {
        return attributed(id, std::forward<Forward>(forward));
    }
    const MemoryModule& part = memory_module(id);
    m_part_hooks->before_forward(part);
    torch::Tensor output = attributed(id, std::forward<Forward>(forward));
    m_part_hooks->after_forward(part);
    if (output.requires_grad() && part.backward_reads_parameters) {
        PartHooks* hooks = m_part_hooks;
        output.register_hook(
            [hooks, &part](const torch::Tensor&) { hooks->before_backward(part); });
    }
    return output;
}

// Mean of `values` [B, L, D] over the positions where `mask` [B, L] is true.
torch::Tensor masked_mean(const torch::Tensor& values, const torch::Tensor& mask);

std::shared_ptr<TextClassifier> make_classifier(const ExperimentConfig& config,
                                                const torch::Tensor& initial_embeddings,
                                                int num_classes);

}  // namespace oomlab::model
