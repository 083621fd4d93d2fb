// Files out of (and into) the workbench: runs as JSON or CSV through the engine's own
// formats (run_json.h, the same as `oomlab-cli runs export`), configs as JSON.
#pragma once

#include <QString>
#include <QVector>

#include "oomlab/config/experiment_config.h"
#include "oomlab/store/run_store.h"

namespace oomlab::ui {

// By the file's extension:
//   .json  one run: its summary, config, metrics and events; several: a JSON array of those.
//   .csv   the metrics, one row per sample; with several runs a leading run_id column.
// Returns an empty string on success, else the error.
QString exportRuns(const RunStore& store, const QVector<qint64>& runIds, const QString& path);

QString saveConfigFile(const ExperimentConfig& config, const QString& path);
// On failure returns false and sets `error` (the engine's message names file, line and key).
bool loadConfigFile(const QString& path, ExperimentConfig& config, QString& error);

// Checks a file the user chose to write (the save dialog asked before replacing one) as the
// engine checks every output: not a folder, a device or a FIFO, not the open database, in a
// writable folder. Returns the error, or an empty string.
QString checkChosenOutput(const QString& path);

// Writes `content` atomically, after checkChosenOutput.
QString writeTextFile(const QString& path, const std::string& content);

}  // namespace oomlab::ui
