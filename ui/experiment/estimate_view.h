// The predicted memory breakdown (the engine's estimator) as a stacked bar against the cap,
// updated as settings change. Profiling the data reads files, so it runs on a pool thread
// and only when a setting it depends on changed; the estimate itself is cheap.
#pragma once

#include "oomlab/run/prediction_record.h"

#include <QStringList>

#include <QFutureWatcher>
#include <QTimer>
#include <QWidget>

#include <memory>

#include "oomlab/estimator/estimator.h"

class QLabel;

namespace oomlab::ui {

class BreakdownChart;

struct ProfileResult {
    QString key;
    QString error;
    QStringList errorKeys;  // the settings the error is about
    std::shared_ptr<const DataProfile> profile;
};

class EstimateView : public QWidget {
    Q_OBJECT

public:
    explicit EstimateView(QWidget* parent = nullptr);
    ~EstimateView() override;

    void setConfig(const ExperimentConfig& config);  // debounced
    // The estimator's record in the open database, for all runs and by model.kind ("bag"):
    // shown under the predicted peak, with a warning where a run of the same model measured
    // more than its prediction beyond the tolerance.
    void setRecord(const PredictionRecords& records);
    QString recordText() const;  // what it says of the record for the config shown
    // The estimate is for one of this many data-parallel processes (distributed.shard).
    void setProcesses(int processes);
    bool hasEstimate() const { return m_hasEstimate; }
    const MemoryEstimate& estimate() const { return m_estimate; }
    BreakdownChart* chart() const { return m_chart; }
    // The data and vectors as read for the estimate (null before the first read, or when
    // reading failed).
    std::shared_ptr<const DataProfile> profile() const { return m_profile.profile; }

signals:
    void estimateChanged(const oomlab::MemoryEstimate& estimate);
    // Reading the inputs failed (empty `message`: they read fine again).
    void readProblem(const QStringList& keys, const QString& message);

private:
    void update();
    void showEstimate();
    static QString profileKey(const ExperimentConfig& config);

    BreakdownChart* m_chart = nullptr;
    QLabel* m_summary = nullptr;
    QTimer m_debounce;
    ExperimentConfig m_config;
    int m_processes = 1;
    QFutureWatcher<ProfileResult> m_watcher;
    ProfileResult m_profile;
    MemoryEstimate m_estimate;
    bool m_hasEstimate = false;
    PredictionRecords m_records;
};

}  // namespace oomlab::ui
