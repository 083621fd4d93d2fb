#include "oomlab/config/key_relevance.h"

namespace oomlab {

std::string key_inactive_reason(const ExperimentConfig& config, std::string_view key) {
    const ModelKind kind = config.model.kind;
    if (key == "model.hidden" && kind == ModelKind::Transformer) {
        return "used by model.kind=bag and bilstm (the transformer uses model.ffn)";
    }
    if (key == "model.layers" && kind == ModelKind::Bag) {
        return "used by model.kind=bilstm and transformer";
    }
    if ((key == "model.heads" || key == "model.d_model" || key == "model.ffn") &&
        kind != ModelKind::Transformer) {
        return "used by model.kind=transformer";
    }
    if (key == "memory.checkpointing" && kind == ModelKind::Bag) {
        return "the bag model has no layers to recompute";
    }
    if (key == "embeddings.path" && config.embeddings.source != EmbeddingSource::File) {
        return "used with embeddings.source=file";
    }
    if (key == "dataset.valid_ratio" && !config.dataset.valid_path.empty()) {
        return "validation data is given in dataset.valid_path";
    }
    if (key == "data.pin_memory" && config.device == "cpu") {
        return "pinned memory only helps copies to a CUDA device";
    }
    if (key == "train.epochs" && config.train.max_steps > 0) {
        return "train.max_steps is set";
    }
    return {};
}

}  // namespace oomlab
