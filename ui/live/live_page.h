// The run in progress: what it trains on, loss and memory as they arrive, the per-phase
// sawtooth, memory by module and the staircase of stages, the run's events, and an
// explanation when it ends out of memory or fails.
#pragma once

#include <QWidget>

#include "common/run_types.h"

class QDoubleSpinBox;
class QLabel;
class QPlainTextEdit;
class QSplitter;
class QTabWidget;

namespace oomlab::ui {

class FailurePanel;
class LossPlot;
class MemoryPlot;
class ModuleView;
class PhasePlot;
class StaircaseChart;
class ThemedPlot;

class LivePage : public QWidget {
    Q_OBJECT

public:
    explicit LivePage(QWidget* parent = nullptr);

    LossPlot* lossPlot() const { return m_loss; }
    MemoryPlot* memoryPlot() const { return m_memory; }
    PhasePlot* phasePlot() const { return m_phases; }
    ModuleView* moduleView() const { return m_modules; }
    StaircaseChart* staircaseChart() const { return m_staircase; }
    QTabWidget* memoryTabs() const { return m_memoryTabs; }
    FailurePanel* failurePanel() const { return m_failure; }
    QDoubleSpinBox* smoothingBox() const { return m_smoothing; }
    QList<ThemedPlot*> plots() const;
    // Side by side where `width` holds both of each pair (the loss and memory plots, the
    // memory tabs and the event log), else one above the other: beside the experiment panel
    // at a projector's text size the pairs made the page scroll sideways. Called as the page's
    // viewport (its scroll area's) is resized.
    void fitWidth(int width);
    qint64 currentRunId() const { return m_runId; }
    QString header() const;

    void onRunStarted(const oomlab::ExperimentConfig& config, const QString& name);
    // A lesson's runs, by label in the order they run: each keeps its loss and memory lines
    // on the plots while the next trains.
    void onLessonStarted(const QStringList& runLabels);
    void onPrepareProgress(const QString& stage, double fraction);
    void onRunCreated(qint64 runId, const oomlab::ExperimentInfo& info);
    void onMetrics(const oomlab::ui::MetricBatch& batch);
    void onEvent(qint64 runId, const oomlab::EventRow& event);
    void onRunFinished(const oomlab::ui::RunEnd& end);
    // One more line under the run's ending (nothing for an empty `text`).
    void addHeaderLine(const QString& text);

signals:
    void applyFix(const oomlab::Settings& settings, bool run);

protected:
    bool event(QEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void log(const QString& line);
    void setHeader(const QString& text);
    void resetPlots();

    QLabel* m_header = nullptr;
    FailurePanel* m_failure = nullptr;
    LossPlot* m_loss = nullptr;
    MemoryPlot* m_memory = nullptr;
    PhasePlot* m_phases = nullptr;
    ModuleView* m_modules = nullptr;
    StaircaseChart* m_staircase = nullptr;
    QTabWidget* m_memoryTabs = nullptr;
    QPlainTextEdit* m_log = nullptr;
    QSplitter* m_plotPair = nullptr;    // loss | memory
    QSplitter* m_detailPair = nullptr;  // memory tabs | event log
    bool m_fitPending = false;
    QDoubleSpinBox* m_smoothing = nullptr;
    qint64 m_runId = 0;
    std::int64_t m_capBytes = 0;
    QString m_name;
    QStringList m_lessonRuns;  // the labels of the lesson's runs; empty outside a lesson
    int m_runsCreated = 0;     // since the run (or lesson) started
    QString m_datasetName;     // "trec", "fortunes"
};

}  // namespace oomlab::ui
