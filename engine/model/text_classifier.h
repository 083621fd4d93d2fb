// The classifiers: token ids in, class logits out. Each model owns its embedding table.
#pragma once

#include <torch/nn.h>

#include <memory>

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

class TextClassifier : public torch::nn::Module {
public:
    // ids: [B, L] int64; mask: [B, L] bool, true for real tokens. Returns [B, classes].
    virtual torch::Tensor forward(const torch::Tensor& ids, const torch::Tensor& mask) = 0;
    virtual EmbeddingTable& embeddings() = 0;
    // Recompute encoder blocks in backward (models without blocks ignore it).
    virtual void set_checkpointing(bool /*enabled*/) {}
};

// Mean of `values` [B, L, D] over the positions where `mask` [B, L] is true.
torch::Tensor masked_mean(const torch::Tensor& values, const torch::Tensor& mask);

std::shared_ptr<TextClassifier> make_classifier(const ExperimentConfig& config,
                                                const torch::Tensor& initial_embeddings,
                                                int num_classes);

}  // namespace oomlab::model
