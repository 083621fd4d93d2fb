// Small conversions between the engine's plain values and what the widgets show.
#pragma once

#include <QColor>
#include <QString>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "oomlab/config/experiment_config.h"
#include "oomlab/run/ended_batch.h"
#include "oomlab/run/run_record.h"

namespace oomlab::ui {

inline QString qs(std::string_view text) {
    return QString::fromUtf8(text.data(), static_cast<int>(text.size()));
}
inline std::string ss(const QString& text) {
    return text.toUtf8().toStdString();
}

// "12.0 MiB", "1.83 GiB", "512 B".
QString formatBytes(std::int64_t bytes);
// A change in bytes: "+12.0 MiB", "-512 B", "0 B".
QString formatSignedBytes(std::int64_t bytes);
// Bytes as MiB (the plots' unit).
inline double toMiB(std::int64_t bytes) {
    return static_cast<double>(bytes) / (1024.0 * 1024.0);
}
// "3.2 s", "4 min 05 s", "1 h 02 min".
QString formatDuration(double seconds);
// "1.2346" or an em dash when absent.
QString formatOptional(const std::optional<double>& value, int decimals = 4);
QString formatPercent(const std::optional<double>& fraction);
// "12,437" in the user's locale.
QString formatCount(std::int64_t count);
// "1 step", "12,437 steps".
QString formatSteps(std::int64_t steps);
// `one` when `count` is 1, else `many`, with %n replaced by the count ("Loading 1 run…",
// "Loading 3 runs…"). Qt's tr(text, nullptr, n) takes plural forms from a translation file,
// which this English-only workbench does not ship; without one it shows "run(s)".
QString plural(std::int64_t count, const QString& one, const QString& many);
// A row of memory figures: "optimizer state" for a category, "block 1 · activations" for a
// module's kind of memory.
QString memoryFigureName(const std::string& module, const std::string& category);

QString statusName(RunStatus status);

// The micro-batch and accumulation `config` plans, for batch_adapted and ended_batch.
BatchShape plannedBatch(const ExperimentConfig& config);
// "16×4": the micro-batch and accumulation a run ended with; "16×4 (adapted from 64)" when
// on_oom=halve or adapt changed them from the config's (batch_adapted).
QString endedBatchText(const RunRecord& run, const ExperimentConfig& config);
// A colour that reads on both light and dark palettes.
QColor statusColor(RunStatus status);

}  // namespace oomlab::ui
