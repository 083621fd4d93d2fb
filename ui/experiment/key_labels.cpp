#include "experiment/key_labels.h"

#include <QCoreApplication>
#include <QHash>

namespace oomlab::ui {
namespace {

QString fromName(const QString& key) {
    QString field = key.mid(key.indexOf('.') + 1);
    field.replace('_', ' ');
    if (!field.isEmpty()) {
        field[0] = field[0].toUpper();
    }
    return field;
}

const QHash<QString, const char*>& labels() {
    static const QHash<QString, const char*> table = {
        {"dataset.path", QT_TRANSLATE_NOOP("KeyLabel", "Training data")},
        {"dataset.valid_path", QT_TRANSLATE_NOOP("KeyLabel", "Validation data")},
        {"dataset.format", QT_TRANSLATE_NOOP("KeyLabel", "File format")},
        {"dataset.valid_ratio", QT_TRANSLATE_NOOP("KeyLabel", "Validation share")},
        {"embeddings.source", QT_TRANSLATE_NOOP("KeyLabel", "Vectors from")},
        {"embeddings.path", QT_TRANSLATE_NOOP("KeyLabel", "GloVe file")},
        {"embeddings.variant", QT_TRANSLATE_NOOP("KeyLabel", "GloVe variant")},
        {"embeddings.vocab", QT_TRANSLATE_NOOP("KeyLabel", "Table rows (vocabulary)")},
        {"embeddings.trainable", QT_TRANSLATE_NOOP("KeyLabel", "Fine-tune the table")},
        {"embeddings.placement", QT_TRANSLATE_NOOP("KeyLabel", "Table placement")},
        {"embeddings.dtype", QT_TRANSLATE_NOOP("KeyLabel", "Table storage type")},
        {"embeddings.sparse_grad", QT_TRANSLATE_NOOP("KeyLabel", "Sparse table gradients")},
        {"model.kind", QT_TRANSLATE_NOOP("KeyLabel", "Model")},
        {"model.hidden", QT_TRANSLATE_NOOP("KeyLabel", "Hidden width")},
        {"model.layers", QT_TRANSLATE_NOOP("KeyLabel", "Layers")},
        {"model.heads", QT_TRANSLATE_NOOP("KeyLabel", "Attention heads")},
        {"model.d_model", QT_TRANSLATE_NOOP("KeyLabel", "Model width")},
        {"model.ffn", QT_TRANSLATE_NOOP("KeyLabel", "Feed-forward width")},
        {"model.dropout", QT_TRANSLATE_NOOP("KeyLabel", "Dropout")},
        {"train.epochs", QT_TRANSLATE_NOOP("KeyLabel", "Epochs")},
        {"train.max_steps", QT_TRANSLATE_NOOP("KeyLabel", "Stop after steps")},
        {"train.batch_size", QT_TRANSLATE_NOOP("KeyLabel", "Micro-batch size")},
        {"train.accumulation", QT_TRANSLATE_NOOP("KeyLabel", "Accumulation steps")},
        {"train.max_len", QT_TRANSLATE_NOOP("KeyLabel", "Tokens per example")},
        {"train.padding", QT_TRANSLATE_NOOP("KeyLabel", "Padding")},
        {"train.optimizer", QT_TRANSLATE_NOOP("KeyLabel", "Optimizer")},
        {"train.lr", QT_TRANSLATE_NOOP("KeyLabel", "Learning rate")},
        {"train.seed", QT_TRANSLATE_NOOP("KeyLabel", "Random seed")},
        {"memory.precision", QT_TRANSLATE_NOOP("KeyLabel", "Mixed precision")},
        {"memory.checkpointing", QT_TRANSLATE_NOOP("KeyLabel", "Activation checkpointing")},
        {"memory.empty_cache", QT_TRANSLATE_NOOP("KeyLabel", "Empty the cache")},
        {"memory.cap_mb", QT_TRANSLATE_NOOP("KeyLabel", "Memory cap (MiB)")},
        {"memory.alloc_conf", QT_TRANSLATE_NOOP("KeyLabel", "Caching allocator settings")},
        {"memory.on_oom", QT_TRANSLATE_NOOP("KeyLabel", "On out-of-memory")},
        {"data.loading", QT_TRANSLATE_NOOP("KeyLabel", "Data loading")},
        {"data.pin_memory", QT_TRANSLATE_NOOP("KeyLabel", "Pinned host memory")},
        {"eval.every", QT_TRANSLATE_NOOP("KeyLabel", "Validate every (steps)")},
        {"eval.no_grad", QT_TRANSLATE_NOOP("KeyLabel", "Validate without autograd")},
        {"debug.keep_loss_graph", QT_TRANSLATE_NOOP("KeyLabel", "Keep every loss graph (leak)")},
        {"debug.memory_snapshot", QT_TRANSLATE_NOOP("KeyLabel", "Memory snapshot file")},
        {"device", QT_TRANSLATE_NOOP("KeyLabel", "Device")},
        {"distributed.backend", QT_TRANSLATE_NOOP("KeyLabel", "Communication backend")},
        {"distributed.shard", QT_TRANSLATE_NOOP("KeyLabel", "Shard across processes")},
        {"distributed.bucket_mb", QT_TRANSLATE_NOOP("KeyLabel", "Gradient bucket (MiB)")},
        {"distributed.timeout_s", QT_TRANSLATE_NOOP("KeyLabel", "Wait for the others (s)")},
    };
    return table;
}

}  // namespace

bool hasOwnLabel(const QString& key) {
    return labels().contains(key);
}

QString keyLabel(const QString& key) {
    const char* label = labels().value(key, nullptr);
    return label ? QCoreApplication::translate("KeyLabel", label) : fromName(key);
}

}  // namespace oomlab::ui
