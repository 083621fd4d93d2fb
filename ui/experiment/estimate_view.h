// The predicted memory breakdown (the engine's estimator) as a stacked bar against the cap,
// updated as settings change. Profiling the data reads files, so it runs on a pool thread
// and only when a setting it depends on changed; the estimate itself is cheap.
#pragma once

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
    std::shared_ptr<const DataProfile> profile;
};

class EstimateView : public QWidget {
    Q_OBJECT

public:
    explicit EstimateView(QWidget* parent = nullptr);
    ~EstimateView() override;

    void setConfig(const ExperimentConfig& config);  // debounced
    bool hasEstimate() const { return m_hasEstimate; }
    const MemoryEstimate& estimate() const { return m_estimate; }
    BreakdownChart* chart() const { return m_chart; }
    std::int64_t datasetWords() const;  // distinct dataset words (vocab rows) once profiled

signals:
    void estimateChanged(const oomlab::MemoryEstimate& estimate);

private:
    void update();
    void showEstimate();
    static QString profileKey(const ExperimentConfig& config);

    BreakdownChart* m_chart = nullptr;
    QLabel* m_summary = nullptr;
    QTimer m_debounce;
    ExperimentConfig m_config;
    QFutureWatcher<ProfileResult> m_watcher;
    ProfileResult m_profile;
    MemoryEstimate m_estimate;
    bool m_hasEstimate = false;
};

}  // namespace oomlab::ui
