#include "oomlab/config/key_relevance.h"

#include "oomlab/config/config_keys.h"

namespace oomlab {

std::string key_inactive_reason(const ExperimentConfig& config, std::string_view key,
                                int processes) {
    const ModelKind kind = config.model.kind;
    if (key.rfind("distributed.", 0) == 0 && processes <= 1) {
        return "used when several processes train the run (Processes, oomlab-cli run --nproc N "
               "or torchrun)";
    }
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

std::vector<std::string> unused_settings(const ExperimentConfig& config, int processes) {
    const ExperimentConfig defaults;
    std::vector<std::string> notes;
    for (const ConfigKeyInfo& key : config_keys()) {
        const std::string value = get_config_value(config, key.name);
        if (value == get_config_value(defaults, key.name)) {
            continue;
        }
        const std::string reason = key_inactive_reason(config, key.name, processes);
        if (!reason.empty()) {
            notes.push_back(key.name + "=" + value + " has no effect here: " + reason);
        }
    }
    return notes;
}

}  // namespace oomlab
