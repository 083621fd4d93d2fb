#include "live/training_worker.h"

#include "common/formatting.h"
#include "oomlab/common/errors.h"

namespace oomlab::ui {

TrainingWorker::TrainingWorker(QObject* parent) : QObject(parent) { registerRunTypes(); }

void TrainingWorker::run(const ExperimentConfig& config, const QString& name,
                         const QString& databasePath) {
    RunEnd end;
    end.config = config;
    m_runId = 0;
    m_lastProgressMs = -1;
    m_lastPrepareMs = -1;
    m_progressClock.start();
    try {
        RunStore store = RunStore::open(ss(databasePath));
        const RunResult result = run_and_record(config, ss(name), store, *this, m_cancel);
        end.runId = result.run_id;
        end.status = result.outcome.status;
        end.error = qs(result.outcome.error);
        end.outcome = result.outcome;
        end.info = result.info;
    } catch (const Cancelled&) {
        end.runId = m_runId;
        end.status = RunStatus::Cancelled;
        end.error = tr("stopped before training started");
    } catch (const BadInput& error) {
        end.runId = m_runId;
        end.status = RunStatus::Failed;
        end.badInput = m_runId == 0;
        end.error = qs(error.what());
    } catch (const std::exception& error) {
        end.runId = m_runId;
        end.status = RunStatus::Failed;
        end.error = qs(error.what());
    } catch (...) {
        end.runId = m_runId;
        end.status = RunStatus::Failed;
        end.error = tr("unknown error in the training thread");
    }
    emit runFinished(end);
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

void TrainingWorker::on_event(const EventRow& event) { emit eventArrived(m_runId, event); }

void TrainingWorker::on_progress(const TrainProgress& progress) {
    const qint64 now = m_progressClock.elapsed();
    const bool last = progress.total_steps > 0 && progress.step >= progress.total_steps;
    if (!last && m_lastProgressMs >= 0 && now - m_lastProgressMs < kProgressIntervalMs) {
        return;
    }
    m_lastProgressMs = now;
    emit progressChanged(progress);
}

}  // namespace oomlab::ui
