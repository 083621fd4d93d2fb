// What the compare view shows of each run, read on a pool thread with its own database
// connection so that long runs never stall the window.
#pragma once

#include <QString>
#include <QVector>

#include <optional>
#include <vector>

#include "oomlab/config/experiment_config.h"
#include "oomlab/store/run_store.h"

namespace oomlab::ui {

struct CompareRun {
    RunRecord record;
    ExperimentConfig config;
    bool configRead = false;
    // What a plot can show of its rows (RunStore::thinned_metrics), and the mean throughput of
    // all of them; unset when `metrics` are all its rows.
    std::vector<MetricRow> metrics;
    std::optional<double> meanSamplesPerS;
};

struct CompareData {
    QString error;
    QVector<CompareRun> runs;  // in the order asked for; missing runs are left out
};

// Opens `databasePath` itself (safe on any thread). Never throws.
CompareData loadCompareData(const QString& databasePath, const QVector<qint64>& runIds);

// The start the names of all `runs` share, ending at a word ("sharding-the-optimizer-state: "
// for a lesson's runs); empty when they share no whole word or there is only one run.
QString sharedNamePrefix(const QVector<CompareRun>& runs);

// "#3 bag b32 fp32 adam", the legend's name of a run; with `maxChars` > 0, a longer label
// ends in "…" after that many characters (legends and bars on a small screen).
QString runLabel(const RunRecord& run, int maxChars = 0);

}  // namespace oomlab::ui
