// One series of a whole class on one plot, for a projector: each student's run a thin line
// (coloured while it runs, grey once done), the class's median bold over them, and a cross
// where a run ran out of memory. Redrawn whole at each refresh of the class window.
#pragma once

#include "oomlab/trackers/mlflow_class.h"
#include "plots/themed_plot.h"

namespace oomlab::ui {

class ClassPlot : public ThemedPlot {
    Q_OBJECT

public:
    enum class Series { Loss, Memory };
    explicit ClassPlot(Series series, QWidget* parent = nullptr);

    void showClass(const trackers::ClassProgress& progress);

    // What is drawn, for tests: a line per run that has a value, the median's points, the
    // crosses where runs ran out of memory.
    int runLines() const { return m_runLines; }
    const QCPGraph* median() const { return m_median; }
    const QCPGraph* outOfMemory() const { return m_outOfMemory; }

protected:
    void fitRanges() override;

private:
    const trackers::StepSeries& of(const trackers::ClassRun& run) const;

    Series m_series;
    QCPGraph* m_running = nullptr;  // legend keys for the runs' lines
    QCPGraph* m_done = nullptr;
    QCPGraph* m_median = nullptr;
    QCPGraph* m_outOfMemory = nullptr;
    QVector<QCPGraph*> m_runs;
    int m_runLines = 0;
    Bounds m_x;
    Bounds m_y;
};

}  // namespace oomlab::ui
