// The engine's run on a worker thread. The worker object lives in the controller's QThread
// (moveToThread); as the engine's RunListener it turns the engine's callbacks into queued
// signals carrying value structs. Nothing is thrown past it: every exception becomes a
// RunEnd with a status and a message.
#pragma once

#include <QElapsedTimer>
#include <QObject>

#include <atomic>

#include "common/run_types.h"
#include "oomlab/lessons/lesson.h"
#include "oomlab/session/run_session.h"

namespace oomlab::ui {

class TrainingWorker : public QObject, public RunListener {
    Q_OBJECT

public:
    static constexpr int kProgressIntervalMs = 100;

    explicit TrainingWorker(QObject* parent = nullptr);

    // Thread-safe: the engine checks it every step.
    void requestStop() { m_cancel.store(true); }
    void clearStop() { m_cancel.store(false); }
    // Thread-safe: a pause after every optimizer step, so a class can watch the curves grow
    // (0: full speed), also in a run of several processes. Memory is unaffected: the pause
    // comes between steps.
    void setStepPauseMs(int milliseconds) { m_stepPauseMs.store(milliseconds); }
    // Thread-safe: hold the run after its current optimizer step until resumed (Pause), and
    // while held let one more step through (Step). Only in this process: a run of several
    // processes is not held.
    void setHeld(bool held) { m_held.store(held); }
    bool isHeld() const { return m_held.load(); }
    void allowOneStep() { m_stepsAllowed.fetch_add(1); }

    // Runs on the worker's thread (invoked queued by the controller). Opens its own
    // connection to the database, trains, records, and ends with runFinished().
    // With `processes` > 1 the run is trained by that many local oomlab-cli workers; their
    // rows are read back from the database as they arrive and reported the same way.
    void run(const oomlab::ExperimentConfig& config, const QString& name,
             const QString& databasePath, int processes = 1);

    // Runs every run of a lesson with the engine's lesson runner, which then checks the
    // lesson's claims; ends with lessonFinished().
    void runLesson(const oomlab::Lesson& lesson, const QString& databasePath);

    // The engine's search for the largest micro-batch under the cap (short trial runs, no
    // database); reports each trial, then batchSearchFinished().
    // With several processes each trial trains every rank (oomlab-cli workers).
    void findBatchSize(const oomlab::ExperimentConfig& config, int processes);

signals:
    void prepareProgress(const QString& stage, double fraction);
    void runCreated(qint64 runId, const oomlab::ExperimentInfo& info);
    void metricsArrived(const oomlab::ui::MetricBatch& batch);
    void eventArrived(qint64 runId, const oomlab::EventRow& event);
    void progressChanged(const oomlab::TrainProgress& progress);
    void runFinished(const oomlab::ui::RunEnd& end);
    void lessonFinished(const oomlab::ui::LessonEnd& end);
    void batchTrial(int batchSize, bool fits, qint64 peakBytes);
    // batchSize 0: not even one example fits; `error` set when the search could not run.
    void batchSearchFinished(int batchSize, int predicted, const QString& error);

private:
    // RunListener, called on this thread by the engine.
    void on_prepare(const std::string& stage, double fraction) override;
    void on_run_created(std::int64_t run_id, const ExperimentInfo& info) override;
    void on_metrics(const std::vector<MetricRow>& rows) override;
    void on_event(const EventRow& event) override;
    void on_progress(const TrainProgress& progress) override;
    // Held: RunListener::kHeldMs, or 0 once for each step allowed (taken by the call).
    int step_pause_ms() const override;
    // Asked once a step, so it must take no allowed step: held or paced.
    bool pauses_between_steps() const override { return m_held.load() || m_stepPauseMs.load() > 0; }

    void resetCallbacks();

    std::atomic<bool> m_cancel{false};
    std::atomic<int> m_stepPauseMs{0};
    std::atomic<bool> m_held{false};
    mutable std::atomic<int> m_stepsAllowed{0};  // taken by the engine's wait, one a step
    std::int64_t m_runId = 0;
    QElapsedTimer m_progressClock;
    qint64 m_lastProgressMs = -1;
    qint64 m_lastPrepareMs = -1;
};

}  // namespace oomlab::ui
