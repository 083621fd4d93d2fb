#include "experiment/glove_cost.h"

#include <QObject>

#include <algorithm>

#include "common/formatting.h"
#include "oomlab/estimator/estimator.h"
#include "oomlab/glove/variants.h"

namespace oomlab::ui {

GloveCost gloveCost(const ExperimentConfig& config, const DataProfile* profile) {
    GloveCost cost;
    const GloveVariant* variant = find_glove_variant(config.embeddings.variant);
    if (profile) {
        cost.sourceWords =
            profile->synthetic_vectors ? (variant ? variant->words : 0) : profile->vector_rows;
        cost.dim = profile->embedding_dim;
        cost.rows = profile->vocab_rows;
    } else if (variant) {
        cost.sourceWords = variant->words;
        cost.dim = variant->dim;
        if (config.embeddings.vocab != VocabMode::Dataset) {  // that one: once the data is read
            cost.rows = embedding_table_rows(config.embeddings, variant->words, 0);
        }
    }
    const EmbeddingTableCost table = embedding_table_cost(config, cost.rows, cost.dim);
    cost.tableBytes = table.weights;
    cost.trainingBytes = table.gradient + table.optimizer_state;
    return cost;
}

QString gloveCostText(const ExperimentConfig& config, const DataProfile* profile) {
    const GloveCost cost = gloveCost(config, profile);
    if (cost.dim == 0) {
        return QObject::tr("Unknown GloVe variant \"%1\"").arg(qs(config.embeddings.variant));
    }
    const bool fromFile = profile && !profile->synthetic_vectors;
    const GloveVariant* variant = find_glove_variant(config.embeddings.variant);
    QString text = fromFile
                       ? QObject::tr(
                             "<b>The GloVe file</b>: %1 words × %2 dimensions; the whole table "
                             "is %3 in fp32.")
                             .arg(formatCount(cost.sourceWords))
                             .arg(cost.dim)
                             .arg(formatBytes(cost.sourceWords * cost.dim * 4))
                       : QObject::tr(
                             "<b>%1</b> (%2%3): %4 words × %5 dimensions; the full table is "
                             "%6 in fp32.")
                             .arg(qs(variant->name), qs(variant->corpus),
                                  profile ? QObject::tr(", synthetic: no GloVe file") : QString(),
                                  formatCount(cost.sourceWords))
                             .arg(cost.dim)
                             .arg(formatBytes(cost.sourceWords * cost.dim * 4));
    if (fromFile && profile->dataset_words > 0) {
        text +=
            QObject::tr("<br>%1 of the dataset's %2 words have a vector (%3%).")
                .arg(formatCount(profile->words_with_vector), formatCount(profile->dataset_words))
                .arg(100.0 * double(profile->words_with_vector) / double(profile->dataset_words), 0,
                     'f', 1);
    }
    if (cost.rows == 0) {
        text += QObject::tr(
            "<br>With vocab=dataset the table holds only the dataset's words "
            "(counted once the data is read).");
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
