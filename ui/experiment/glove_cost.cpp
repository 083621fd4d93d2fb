#include "experiment/glove_cost.h"

#include <QObject>

#include <algorithm>

#include "common/formatting.h"
#include "oomlab/glove/variants.h"

namespace oomlab::ui {
namespace {

int bytesPerValue(DType dtype) {
    return dtype == DType::Fp32 ? 4 : 2;
}

// Optimizer state per trainable value, in copies (the engine's teaching table).
int stateCopies(OptimizerKind optimizer) {
    switch (optimizer) {
        case OptimizerKind::Sgd:
            return 0;
        case OptimizerKind::Momentum:
        case OptimizerKind::Adagrad:
            return 1;
        case OptimizerKind::Adam:
        case OptimizerKind::AdamW:
            return 2;
    }
    return 0;
}

}  // namespace

GloveCost gloveCost(const ExperimentConfig& config, std::int64_t datasetWords) {
    GloveCost cost;
    const GloveVariant* variant = find_glove_variant(config.embeddings.variant);
    if (!variant) {
        return cost;
    }
    cost.variantWords = variant->words;
    cost.dim = variant->dim;
    switch (config.embeddings.vocab) {
        case VocabMode::Full:
            cost.rows = variant->words;
            break;
        case VocabMode::Top:
            cost.rows = std::min(variant->words, config.embeddings.top_n);
            break;
        case VocabMode::Dataset:
            cost.rows = datasetWords;
            break;
    }
    const std::int64_t values = cost.rows * cost.dim;
    cost.tableBytes = values * bytesPerValue(config.embeddings.dtype);
    if (config.embeddings.trainable) {
        // Dense gradient (sparse: only looked-up rows) plus the optimizer's fp32 state.
        const std::int64_t gradient =
            config.embeddings.sparse_grad ? 0 : values * bytesPerValue(config.embeddings.dtype);
        cost.trainingBytes = gradient + values * 4 * stateCopies(config.train.optimizer);
    }
    return cost;
}

QString gloveCostText(const ExperimentConfig& config, std::int64_t datasetWords) {
    const GloveCost cost = gloveCost(config, datasetWords);
    if (cost.dim == 0) {
        return QObject::tr("Unknown GloVe variant \"%1\"").arg(qs(config.embeddings.variant));
    }
    const GloveVariant* variant = find_glove_variant(config.embeddings.variant);
    QString text = QObject::tr(
                       "<b>%1</b> (%2): %3 words × %4 dimensions; the full table is %5 "
                       "in fp32.")
                       .arg(qs(variant->name), qs(variant->corpus), formatCount(cost.variantWords))
                       .arg(cost.dim)
                       .arg(formatBytes(cost.variantWords * cost.dim * 4));
    if (cost.rows == 0) {
        text += QObject::tr(
            "<br>With vocab=dataset the table holds only the dataset's words "
            "(counted when the run prepares).");
        return text;
    }
    text += QObject::tr("<br>This run's table: %1 rows = <b>%2</b>")
                .arg(formatCount(cost.rows), formatBytes(cost.tableBytes));
    if (cost.trainingBytes > 0) {
        text += QObject::tr(", plus <b>%1</b> for its gradient and optimizer state")
                    .arg(formatBytes(cost.trainingBytes));
    } else if (!config.embeddings.trainable) {
        text += QObject::tr(" (frozen: no gradient, no optimizer state)");
    }
    if (config.embeddings.placement == EmbeddingPlacement::Cpu) {
        text += QObject::tr("; kept on the host");
    }
    return text + QLatin1Char('.');
}

}  // namespace oomlab::ui
