#include "live/oom_advice.h"

#include <QObject>

#include <algorithm>

#include "common/formatting.h"

namespace oomlab::ui {
namespace {

QString num(std::int64_t value) {
    return QString::number(value);
}

void oomFixes(const ExperimentConfig& c, const RunOutcome& outcome, QVector<Suggestion>& out) {
    const MemoryBreakdown& b = outcome.breakdown;
    const std::int64_t tableState = b.embedding_table + b.gradients + b.optimizer_state;
    if (c.debug.keep_loss_graph) {
        out.push_back({QObject::tr("Stop keeping every step's loss graph: the leak grows with each "
                                   "step until memory runs out."),
                       "debug.keep_loss_graph", "false"});
    }
    if (!c.eval.no_grad) {
        out.push_back({QObject::tr("Evaluate without autograd: evaluation then keeps no "
                                   "activations."),
                       "eval.no_grad", "true"});
    }
    const bool tableDominates = tableState > b.activations;
    QVector<Suggestion> table;
    if (c.embeddings.vocab == VocabMode::Full) {
        table.push_back({QObject::tr("Keep only the dataset's words in the embedding table "
                                     "instead of the whole GloVe vocabulary."),
                         "embeddings.vocab", "dataset"});
    }
    if (c.embeddings.trainable) {
        table.push_back({QObject::tr("Freeze the embedding table: no gradient and no optimizer "
                                     "state for it."),
                         "embeddings.trainable", "false"});
    }
    if (c.embeddings.placement == EmbeddingPlacement::Device &&
        c.embeddings.vocab == VocabMode::Full) {
        table.push_back(
            {QObject::tr("Keep the table on the host and ship only the looked-up rows."),
             "embeddings.placement", "cpu"});
    }
    QVector<Suggestion> activations;
    if (c.train.batch_size > 1) {
        activations.push_back(
            {QObject::tr("Accumulate gradients: half the micro-batch twice per step keeps the "
                         "effective batch and halves activation memory."),
             "train.accumulation", num(c.train.accumulation * 2)});
        activations.push_back({QObject::tr("Halve the batch (activations scale with it)."),
                               "train.batch_size", num(std::max(1, c.train.batch_size / 2))});
    }
    if (c.train.padding == Padding::Fixed) {
        activations.push_back(
            {QObject::tr("Pad each batch to its longest example, not to max_len."), "train.padding",
             "dynamic"});
    }
    if (c.model.kind != ModelKind::Bag && c.memory.checkpointing == Checkpointing::None) {
        activations.push_back({QObject::tr("Recompute layers in backward instead of keeping their "
                                           "activations (about a third more compute)."),
                               "memory.checkpointing", "layers"});
    }
    if (c.memory.precision == DType::Fp32 && c.device != "cpu") {
        activations.push_back({QObject::tr("Use 16-bit activations where safe (autocast)."),
                               "memory.precision", "bf16"});
    }
    if (tableDominates) {
        out += table;
        out += activations;
    } else {
        out += activations;
        out += table;
    }
    if (c.train.optimizer == OptimizerKind::Adam || c.train.optimizer == OptimizerKind::AdamW) {
        out.push_back({QObject::tr("SGD with momentum keeps one copy of the parameters as state, "
                                   "Adam two."),
                       "train.optimizer", "momentum"});
    }
    if (c.memory.on_oom == OnOom::Stop && c.train.batch_size > 1) {
        out.push_back({QObject::tr("Let the engine recover: halve the micro-batch and double "
                                   "accumulation when memory runs out."),
                       "memory.on_oom", "adapt"});
    }
    if (c.memory.cap_mb > 0) {
        out.push_back({QObject::tr("Or give the run more memory (a larger simulated device)."),
                       "memory.cap_mb", num(c.memory.cap_mb * 2)});
    }
}

}  // namespace

QString describeRunEnd(const RunEnd& end) {
    switch (end.status) {
        case RunStatus::Oom: {
            QString text = QObject::tr("The run ran out of memory: %1").arg(end.error);
            const MemoryBreakdown& b = end.outcome.breakdown;
            if (b.total() > 0) {
                QStringList parts;
                for (std::size_t i = 0; i < kBreakdownKeys.size(); ++i) {
                    const std::int64_t bytes = breakdown_field(b, i);
                    if (bytes > 0) {
                        parts << QStringLiteral("%1 %2").arg(
                            QString::fromLatin1(kBreakdownKeys[i].data(),
                                                int(kBreakdownKeys[i].size()))
                                .replace('_', ' '),
                            formatBytes(bytes));
                    }
                }
                text += QObject::tr("\nResident at the failure: %1.")
                            .arg(parts.join(QStringLiteral(", ")));
            }
            if (end.config.memory.cap_mb > 0) {
                text += QObject::tr("\nThe cap was %1 MiB.").arg(end.config.memory.cap_mb);
            }
            return text;
        }
        case RunStatus::Failed:
            return end.badInput ? QObject::tr("The run could not start: %1").arg(end.error)
                                : QObject::tr("The run failed after %1 steps: %2")
                                      .arg(end.outcome.steps)
                                      .arg(end.error);
        case RunStatus::Cancelled:
            return QObject::tr("Stopped: %1.").arg(end.error);
        case RunStatus::Completed:
            return QObject::tr("Completed %1 steps in %2.")
                .arg(end.outcome.steps)
                .arg(formatDuration(end.outcome.wall_seconds));
        default:
            return end.error;
    }
}

QVector<Suggestion> suggestFixes(const RunEnd& end) {
    QVector<Suggestion> out;
    if (end.status == RunStatus::Oom) {
        oomFixes(end.config, end.outcome, out);
    } else if (end.status == RunStatus::Failed) {
        out.push_back({end.badInput
                           ? QObject::tr("Fix the setting or file the message names, then "
                                         "run again; the form marks invalid values.")
                           : QObject::tr("Check the message above; the run and its metrics "
                                         "up to the failure are saved in the Runs tab."),
                       {},
                       {}});
    }
    return out;
}

}  // namespace oomlab::ui
