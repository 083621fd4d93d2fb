#include "live/run_controller.h"

#include <algorithm>

#include "common/freed_memory.h"
#include "live/training_worker.h"

namespace oomlab::ui {

RunController::RunController(QObject* parent) : QObject(parent) {
    registerRunTypes();
    m_thread.setObjectName(QStringLiteral("oomlab-training"));
    m_worker = new TrainingWorker;
    m_worker->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
    // Worker -> GUI thread: queued, because the worker lives in another thread.
    connect(m_worker, &TrainingWorker::prepareProgress, this, &RunController::prepareProgress);
    connect(m_worker, &TrainingWorker::runCreated, this, &RunController::runCreated);
    connect(m_worker, &TrainingWorker::metricsArrived, this, &RunController::metricsArrived);
    connect(m_worker, &TrainingWorker::eventArrived, this, &RunController::eventArrived);
    connect(m_worker, &TrainingWorker::progressChanged, this, &RunController::progressChanged);
    connect(m_worker, &TrainingWorker::runFinished, this, &RunController::onWorkerFinished);
    connect(m_worker, &TrainingWorker::lessonFinished, this, &RunController::onLessonFinished);
    connect(m_worker, &TrainingWorker::batchTrial, this, &RunController::batchTrial);
    connect(m_worker, &TrainingWorker::batchSearchFinished, this,
            [this](int batchSize, int predicted, const QString& error) {
                m_searching = false;
                m_running = false;
                emit runningChanged(false);
                emit batchSearchFinished(batchSize, predicted, error);
            });
    m_thread.start();
}

RunController::~RunController() {
    m_queue.clear();
    if (m_worker) {
        m_worker->requestStop();
    }
    m_thread.quit();
    m_thread.wait();
}

bool RunController::start(const ExperimentConfig& config, const QString& name, int processes) {
    return startQueue({QueuedRun{config, name, processes}});
}

bool RunController::startQueue(const QVector<QueuedRun>& runs) {
    if (m_running || runs.isEmpty()) {
        return false;
    }
    m_queue = runs;
    m_queueRunIds.clear();
    m_stopped = false;
    m_running = true;
    m_processes = runs.front().processes;
    if (m_processes > 1) {
        setHeld(false);
    }
    emit runningChanged(true);
    startNext();
    return true;
}

bool RunController::startLesson(const Lesson& lesson) {
    if (m_running || lesson.runs.empty()) {
        return false;
    }
    m_queue.clear();
    m_queueRunIds.clear();
    m_stopped = false;
    m_running = true;
    m_processes = lesson.processes;
    if (m_processes > 1) {
        setHeld(false);
    }
    emit runningChanged(true);
    m_worker->clearStop();
    const LessonRun& first = lesson.runs.front();
    emit runStarted(lesson_config(lesson, first),
                    QString::fromStdString(lesson.name + ": " + first.label));
    QStringList labels;
    for (const LessonRun& run : lesson.runs) {
        labels << QString::fromStdString(run.label);
    }
    emit lessonStarted(labels);
    TrainingWorker* worker = m_worker;
    const QString database = m_databasePath;
    QMetaObject::invokeMethod(
        worker, [worker, lesson, database] { worker->runLesson(lesson, database); },
        Qt::QueuedConnection);
    return true;
}

bool RunController::startBatchSearch(const ExperimentConfig& config, int processes) {
    if (m_running) {
        return false;
    }
    m_stopped = false;
    m_running = true;
    m_searching = true;
    emit runningChanged(true);
    m_worker->clearStop();  // a search of several processes stops with its workers
    TrainingWorker* worker = m_worker;
    QMetaObject::invokeMethod(
        worker, [worker, config, processes] { worker->findBatchSize(config, processes); },
        Qt::QueuedConnection);
    return true;
}

void RunController::onLessonFinished(const LessonEnd& end) {
    giveFreedMemoryBackSoon();  // what the lesson's runs trained with (three lessons: +400 MB)
    emit runFinished(end.last);
    m_running = false;
    setHeld(false);
    emit runningChanged(false);
    emit queueFinished(end.runIds, end.completed && !m_stopped);
    emit lessonFinished(end);
}

void RunController::startNext() {
    const QueuedRun next = m_queue.takeFirst();
    m_worker->clearStop();
    m_processes = next.processes;
    if (m_processes > 1) {
        setHeld(false);
    }
    emit runStarted(next.config, next.name);
    TrainingWorker* worker = m_worker;
    const QString database = m_databasePath;
    QMetaObject::invokeMethod(
        worker,
        [worker, next, database] { worker->run(next.config, next.name, database, next.processes); },
        Qt::QueuedConnection);
}

void RunController::setHeld(bool held) {
    held = held && (!m_running || m_processes <= 1);
    if (held != m_worker->isHeld()) {
        m_worker->setHeld(held);
        emit heldChanged(held);
    }
}

bool RunController::isHeld() const {
    return m_worker->isHeld();
}

void RunController::step() {
    if (m_worker->isHeld()) {
        m_worker->allowOneStep();
    }
}

void RunController::stop() {
    if (!m_running) {
        return;
    }
    m_stopped = true;
    m_queue.clear();
    m_worker->requestStop();
}

void RunController::onWorkerFinished(const RunEnd& end) {
    giveFreedMemoryBackSoon();  // the run's tensors, batches and table, freed on its thread
    if (end.runId > 0) {
        m_queueRunIds.push_back(end.runId);
    }
    emit runFinished(end);
    if (!m_queue.isEmpty() && !m_stopped) {
        startNext();
        return;
    }
    m_running = false;
    setHeld(false);
    emit runningChanged(false);
    emit queueFinished(m_queueRunIds, !m_stopped);
}

int RunController::stepPauseMs(Pace pace) {
    return step_pause_ms(pace);
}

int RunController::lessonStepPauseMs(Pace pace, std::int64_t steps) {
    const int watchMs = pace == Pace::Slow ? 15000 : pace == Pace::Watchable ? 6000 : 0;
    const std::int64_t spread = steps > 0 ? watchMs / steps : 0;
    return std::max<int>(stepPauseMs(pace), static_cast<int>(std::min<std::int64_t>(spread, 2000)));
}

void RunController::setLessonPace(Pace pace, std::int64_t steps) {
    m_pace = pace;
    m_worker->setStepPauseMs(lessonStepPauseMs(pace, steps));
}

void RunController::setPace(Pace pace) {
    m_pace = pace;
    m_worker->setStepPauseMs(stepPauseMs(pace));
}

}  // namespace oomlab::ui
