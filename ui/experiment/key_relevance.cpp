#include "experiment/key_relevance.h"

#include <QObject>

namespace oomlab::ui {

QString keyInactiveReason(const ExperimentConfig& config, const QString& key) {
    const ModelKind kind = config.model.kind;
    if (key == QLatin1String("model.hidden") && kind == ModelKind::Transformer) {
        return QObject::tr("used by model.kind=bag and bilstm (the transformer uses model.ffn)");
    }
    if (key == QLatin1String("model.layers") && kind == ModelKind::Bag) {
        return QObject::tr("used by model.kind=bilstm and transformer");
    }
    if ((key == QLatin1String("model.heads") || key == QLatin1String("model.d_model") ||
         key == QLatin1String("model.ffn")) &&
        kind != ModelKind::Transformer) {
        return QObject::tr("used by model.kind=transformer");
    }
    if (key == QLatin1String("memory.checkpointing") && kind == ModelKind::Bag) {
        return QObject::tr("the bag model has no layers to recompute");
    }
    if (key == QLatin1String("embeddings.path") &&
        config.embeddings.source != EmbeddingSource::File) {
        return QObject::tr("used with embeddings.source=file");
    }
    if (key == QLatin1String("dataset.valid_ratio") && !config.dataset.valid_path.empty()) {
        return QObject::tr("validation data is given in dataset.valid_path");
    }
    if (key == QLatin1String("data.pin_memory") && config.device == "cpu") {
        return QObject::tr("pinned memory only helps copies to a CUDA device");
    }
    if (key == QLatin1String("train.epochs") && config.train.max_steps > 0) {
        return QObject::tr("train.max_steps is set");
    }
    return {};
}

}  // namespace oomlab::ui
