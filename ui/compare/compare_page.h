// Two or more runs side by side: overlaid loss and memory curves (x by step or time), the
// settings that differ, the peak-memory breakdown of each, what differs between two of them
// at their peaks (per category and per module), and the final metrics.
#pragma once

#include <QFutureWatcher>
#include <QVector>
#include <QWidget>

#include "compare/compare_data.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSplitter;
class QTableView;

namespace oomlab::ui {

class BreakdownChart;
class ComparePlot;
class MemoryDiffView;
class CompareMetricsModel;
class FittedColumns;
class SettingsDiffTable;

class ComparePage : public QWidget {
    Q_OBJECT

public:
    explicit ComparePage(QWidget* parent = nullptr);
    ~ComparePage() override;

    // Rich text about the runs `runIds` (a lesson's checked claims), shown above the
    // comparison while those runs are the ones compared, never above another comparison.
    void setNote(const QString& html, const QVector<qint64>& runIds);
    QString note() const;

    // Loads the runs from `databasePath` in the background; loaded() follows.
    void showRuns(const QString& databasePath, const QVector<qint64>& runIds);
    // As loaded, with their full names (the view leaves out the start the names share).
    const QVector<CompareRun>& runs() const { return m_loaded; }
    bool isLoading() const { return m_watcher.isRunning(); }

    ComparePlot* lossPlot() const { return m_loss; }
    ComparePlot* memoryPlot() const { return m_memory; }
    SettingsDiffTable* settingsTable() const { return m_settings; }
    BreakdownChart* breakdownChart() const { return m_breakdown; }
    MemoryDiffView* memoryDiff() const { return m_diff; }
    QTableView* metricsTable() const { return m_metrics; }
    QDoubleSpinBox* smoothingBox() const { return m_smoothing; }
    void setTimeAxis(bool byTime);
    // Include "other" (device or process memory outside the allocator) in the bars.
    void setShowOther(bool show);
    // Each run's bar followed by the breakdown the estimator predicted for it.
    void setShowPredicted(bool show);
    // Presenting, the results table leaves out the columns a room needs least where they do
    // not all fit (fitted_columns.h); at a desk it scrolls sideways instead.
    void setPresenting(bool on);

signals:
    void loaded();

protected:
    void changeEvent(QEvent* event) override;

private:
    void show(const CompareData& loaded);
    void updateNote();
    void fillMetrics();
    void fillBreakdown();

    QLabel* m_title = nullptr;
    QLabel* m_note = nullptr;
    QString m_noteHtml;
    QVector<qint64> m_noteRuns;   // the runs the note is about
    QVector<qint64> m_shownRuns;  // the runs compared (or loading)
    QComboBox* m_xAxis = nullptr;
    QDoubleSpinBox* m_smoothing = nullptr;
    QComboBox* m_memoryQuantity = nullptr;
    QCheckBox* m_differencesOnly = nullptr;
    QCheckBox* m_showOther = nullptr;
    QCheckBox* m_showPredicted = nullptr;
    ComparePlot* m_loss = nullptr;
    ComparePlot* m_memory = nullptr;
    SettingsDiffTable* m_settings = nullptr;
    BreakdownChart* m_breakdown = nullptr;
    MemoryDiffView* m_diff = nullptr;
    QTableView* m_metrics = nullptr;
    CompareMetricsModel* m_metricsModel = nullptr;
    FittedColumns* m_metricsColumns = nullptr;
    QSplitter* m_lower = nullptr;  // the tables beside the breakdown, or above it presenting
    QFutureWatcher<CompareData> m_watcher;
    QVector<CompareRun> m_loaded;
    QVector<CompareRun> m_runs;  // as shown
};

}  // namespace oomlab::ui
