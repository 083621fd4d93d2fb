// Value structs that travel from the training thread to the GUI thread through queued
// signals. They hold copies, never references into the engine.
#pragma once

#include <QMetaType>
#include <QString>
#include <QStringList>
#include <QVector>

#include <cstdint>
#include <optional>
#include <vector>

#include "oomlab/config/experiment_config.h"
#include "oomlab/session/run_session.h"

namespace oomlab::ui {

// One flush of the engine's metric buffer (~100 ms of training).
struct MetricBatch {
    std::int64_t runId = 0;
    std::vector<MetricRow> rows;
};

// How a run request ended.
struct RunEnd {
    std::int64_t runId = 0;    // 0: no run was created (the settings or inputs were rejected)
    bool badInput = false;     // rejected before a run existed: fix the named setting or file
    QStringList badInputKeys;  // the config keys the rejection is about
    RunOutcome outcome{RunStatus::Failed};  // status, error and the figures measured
    std::vector<OomFix> fixes;              // after an out-of-memory: what to change
    ExperimentInfo info;
    ExperimentConfig config;
    std::optional<MemoryPrediction> prediction;  // as stored with the run

    RunStatus status() const { return outcome.status; }
    QString error() const { return QString::fromStdString(outcome.error); }
};

// How a lesson (several runs, then the engine's checks of its claims) ended.
struct LessonEnd {
    QString name;
    QString title;
    QString deviceNote;  // on CUDA, why the lesson's settings or claims differ there
    QVector<qint64> runIds;
    QStringList runLabels;        // the lesson's label of each run, in order
    QVector<qint64> peaks;        // each run's peak memory, bytes
    QVector<RunStatus> statuses;  // how each run ended
    QVector<qint64> steps;        // the steps each run trained
    QVector<bool> fragmented;     // each run's out-of-memory: more free than asked, in pieces
    QStringList checks;           // the engine's claim checks, in order
    QVector<bool> holds;          // whether each holds
    bool completed = false;
    QString error;  // why the lesson could not run or stopped
    RunEnd last;    // the last run's end, for the live page
};

// Registers the structs for queued connections (idempotent).
void registerRunTypes();

}  // namespace oomlab::ui

Q_DECLARE_METATYPE(oomlab::ui::MetricBatch)
Q_DECLARE_METATYPE(oomlab::ui::RunEnd)
Q_DECLARE_METATYPE(oomlab::ui::LessonEnd)
Q_DECLARE_METATYPE(oomlab::ExperimentInfo)
Q_DECLARE_METATYPE(oomlab::ExperimentConfig)
Q_DECLARE_METATYPE(oomlab::EventRow)
Q_DECLARE_METATYPE(oomlab::TrainProgress)
