// Owns the training thread and its worker; starts runs (one at a time, or a queue of them
// for a lesson), stops them, and re-emits the worker's signals on the GUI thread.
#pragma once

#include <QObject>
#include <QString>
#include <QThread>
#include <QVector>

#include "common/run_types.h"
#include "oomlab/lessons/lesson.h"
#include "oomlab/session/pace.h"

namespace oomlab::ui {

class TrainingWorker;

struct QueuedRun {
    ExperimentConfig config;
    QString name;       // empty: the engine's default name
    int processes = 1;  // > 1: local data-parallel workers (oomlab-cli), one rank each
};

class RunController : public QObject {
    Q_OBJECT

public:
    explicit RunController(QObject* parent = nullptr);
    ~RunController() override;  // stops a run and joins the thread

    void setDatabasePath(const QString& path) { m_databasePath = path; }
    const QString& databasePath() const { return m_databasePath; }
    bool isRunning() const { return m_running; }

    // False when a run is already going.
    bool start(const ExperimentConfig& config, const QString& name = {}, int processes = 1);
    bool startQueue(const QVector<QueuedRun>& runs);
    // A lesson: the engine runs its runs and checks its claims; lessonFinished() follows
    // (after runFinished() for its last run, and queueFinished()).
    bool startLesson(const Lesson& lesson);
    // Searches the largest batch size that fits under the config's cap. A search of one
    // process runs to its end (each trial is two short steps); one of several processes
    // stops with its workers.
    bool startBatchSearch(const ExperimentConfig& config, int processes = 1);
    bool isSearching() const { return m_searching; }
    // Whether stop() was called since the last start.
    bool stopRequested() const { return m_stopped; }
    // Cancels the current run (saved as cancelled) and drops the rest of a queue.
    void stop();
    // Pause: the run holds after its current optimizer step until resumed; Step lets one more
    // step through. A run of several processes is not held (canHold() is false).
    void setHeld(bool held);
    bool isHeld() const;
    bool canHold() const { return m_running && m_processes <= 1; }
    void step();

    // How fast runs train: full speed, or paced so the curves can be watched.
    using Pace = oomlab::Pace;
    void setPace(Pace pace);
    Pace pace() const { return m_pace; }
    static int stepPauseMs(Pace pace);
    // A lesson trains a few steps a run: paced, each of its `steps` (all its runs') waits
    // long enough that the lesson lasts about as long as a room needs to watch it (at least
    // 6 s watchable, 15 s slow). Full speed stays full speed.
    void setLessonPace(Pace pace, std::int64_t steps);
    static int lessonStepPauseMs(Pace pace, std::int64_t steps);

signals:
    void runningChanged(bool running);
    void heldChanged(bool held);
    void runStarted(const oomlab::ExperimentConfig& config, const QString& name);
    // Just after runStarted for a lesson: its runs' labels, in the order they run.
    void lessonStarted(const QStringList& runLabels);
    void prepareProgress(const QString& stage, double fraction);
    void runCreated(qint64 runId, const oomlab::ExperimentInfo& info);
    void metricsArrived(const oomlab::ui::MetricBatch& batch);
    void eventArrived(qint64 runId, const oomlab::EventRow& event);
    void progressChanged(const oomlab::TrainProgress& progress);
    void runFinished(const oomlab::ui::RunEnd& end);
    // After the last run of a queue (or after a stop); the ids of the runs it created.
    void queueFinished(const QVector<qint64>& runIds, bool completed);
    void lessonFinished(const oomlab::ui::LessonEnd& end);
    void batchTrial(int batchSize, bool fits, qint64 peakBytes);
    void batchSearchFinished(int batchSize, int predicted, const QString& error);

private:
    void startNext();
    void onWorkerFinished(const RunEnd& end);
    void onLessonFinished(const LessonEnd& end);

    QThread m_thread;
    TrainingWorker* m_worker = nullptr;
    QString m_databasePath;
    QVector<QueuedRun> m_queue;
    QVector<qint64> m_queueRunIds;
    bool m_running = false;
    int m_processes = 1;  // of the run training now
    bool m_stopped = false;
    bool m_searching = false;
    Pace m_pace = Pace::Full;
};

}  // namespace oomlab::ui
