#include "live/training_worker.h"

#include "common/cli_program.h"
#include "common/formatting.h"
#include "oomlab/common/errors.h"
#include "oomlab/launch/worker_jobs.h"
#include "oomlab/session/batch_size_search.h"

namespace oomlab::ui {
namespace {

// Runs of several processes are trained by oomlab-cli's `worker` subcommand.
void useCliForWorkers() {
    set_worker_program({ss(cliProgram()), {"worker"}});
}

}  // namespace

TrainingWorker::TrainingWorker(QObject* parent) : QObject(parent) {
    registerRunTypes();
    useCliForWorkers();
}

void TrainingWorker::run(const ExperimentConfig& config, const QString& name,
                         const QString& databasePath, int processes) {
    RunEnd end;
    end.config = config;
    resetCallbacks();
    try {
        RunStore store = RunStore::open(ss(databasePath));
        const RunResult result =
            processes > 1
                ? run_with_workers_and_record(config, ss(name), store, *this, m_cancel, processes)
                : run_and_record(config, ss(name), store, *this, m_cancel);
        end.runId = result.run_id;
        end.outcome = result.outcome;
        end.fixes = result.fixes;
        end.info = result.info;
        if (const std::optional<RunRecord> stored = store.find_run(result.run_id)) {
            end.prediction = stored->prediction;
        }
    } catch (const Cancelled&) {
        end.runId = m_runId;
        end.outcome.status = RunStatus::Cancelled;
        end.outcome.error = "stopped before training started";
    } catch (const BadInput& error) {
        end.runId = m_runId;
        end.badInput = m_runId == 0;
        end.outcome.error = error.what();
        for (const std::string& key : error.keys()) {
            end.badInputKeys << qs(key);
        }
    } catch (const std::exception& error) {
        end.runId = m_runId;
        end.outcome.error = error.what();
    } catch (...) {
        end.runId = m_runId;
        end.outcome.error = "unknown error in the training thread";
    }
    emit runFinished(end);
}

void TrainingWorker::resetCallbacks() {
    m_runId = 0;
    m_lastProgressMs = -1;
    m_lastPrepareMs = -1;
    m_progressClock.start();
}

void TrainingWorker::runLesson(const Lesson& lesson, const QString& databasePath) {
    LessonEnd end;
    end.name = qs(lesson.name);
    end.title = qs(lesson.title);
    resetCallbacks();
    try {
        RunStore store = RunStore::open(ss(databasePath));
        const LessonResult result = run_lesson(lesson, store, *this, m_cancel);
        end.deviceNote = qs(result.device_note);
        for (const LessonRunResult& run : result.runs) {
            end.runIds.push_back(run.record.id);
            end.runLabels << qs(run.run.label);
            const RunOutcome& outcome = run.record.outcome;
            end.peaks.push_back(outcome.peak_bytes);
            end.statuses.push_back(outcome.status);
            end.steps.push_back(outcome.steps);
            end.fragmented.push_back(outcome.fragmentation && outcome.fragmentation->fragmented());
        }
        for (const ClaimCheck& check : result.checks) {
            end.checks << qs(check.description);
            end.holds << check.holds;
        }
        end.completed = result.runs.size() == lesson.runs.size() &&
                        result.runs.back().record.outcome.status != RunStatus::Cancelled;
        if (!result.runs.empty()) {
            const LessonRunResult& last = result.runs.back();
            end.last.runId = last.record.id;
            end.last.config = lesson_config(lesson, last.run, !result.device_note.empty());
            end.last.outcome = last.record.outcome;
        }
        if (!end.completed) {
            end.error = tr("stopped before the last run");
        }
    } catch (const std::exception& error) {
        end.error = qs(error.what());
        end.last.runId = m_runId;
        end.last.badInput = m_runId == 0;
        end.last.outcome.error = error.what();
    } catch (...) {
        end.error = tr("unknown error in the training thread");
        end.last.outcome.error = ss(end.error);
    }
    emit lessonFinished(end);
}

void TrainingWorker::findBatchSize(const ExperimentConfig& config, int processes) {
    try {
        const auto on_trial = [this](const BatchTrial& trial) {
            emit batchTrial(trial.batch_size, trial.fits, trial.peak_bytes);
        };
        const BatchSizeSearch search = processes > 1 ? find_batch_size_with_local_workers(
                                                           config, processes, m_cancel, on_trial)
                                                     : find_batch_size(config, on_trial);
        emit batchSearchFinished(search.batch_size, search.predicted, {});
    } catch (const std::exception& error) {
        emit batchSearchFinished(0, 0, qs(error.what()));
    } catch (...) {
        emit batchSearchFinished(0, 0, tr("unknown error in the training thread"));
    }
}

void TrainingWorker::on_prepare(const std::string& stage, double fraction) {
    // Loading a large GloVe file reports often; the GUI needs a few updates per second.
    const qint64 now = m_progressClock.elapsed();
    if (fraction < 1.0 && m_lastPrepareMs >= 0 && now - m_lastPrepareMs < kProgressIntervalMs) {
        return;
    }
    m_lastPrepareMs = now;
    emit prepareProgress(qs(stage), fraction);
}

void TrainingWorker::on_run_created(std::int64_t run_id, const ExperimentInfo& info) {
    m_runId = run_id;
    emit runCreated(run_id, info);
}

void TrainingWorker::on_metrics(const std::vector<MetricRow>& rows) {
    emit metricsArrived(MetricBatch{m_runId, rows});
}

void TrainingWorker::on_event(const EventRow& event) {
    emit eventArrived(m_runId, event);
}

int TrainingWorker::step_pause_ms() const {
    if (!m_held.load()) {
        return m_stepPauseMs.load();
    }
    for (int allowed = m_stepsAllowed.load(); allowed > 0;) {
        if (m_stepsAllowed.compare_exchange_weak(allowed, allowed - 1)) {
            return 0;
        }
    }
    return kHeldMs;
}

void TrainingWorker::on_progress(const TrainProgress& progress) {
    const qint64 now = m_progressClock.elapsed();
    const bool last = progress.total_steps > 0 && progress.step >= progress.total_steps;
    // Held, every step is told: the header names the step the run waits after.
    if (!last && !m_held.load() && m_lastProgressMs >= 0 &&
        now - m_lastProgressMs < kProgressIntervalMs) {
        return;
    }
    m_lastProgressMs = now;
    emit progressChanged(progress);
}

}  // namespace oomlab::ui
