// Overlaid curves of several runs, one colour per run: training loss (validation loss
// dashed) or memory per step, against the step or the wall time.
#pragma once

#include <QVector>

#include "compare/compare_data.h"
#include "plots/themed_plot.h"

namespace oomlab::ui {

class ComparePlot : public ThemedPlot {
    Q_OBJECT

public:
    enum class Quantity { Loss, PeakMemory, AllocatedMemory, ReservedMemory };
    enum class XAxis { Step, Time };

    explicit ComparePlot(Quantity quantity, QWidget* parent = nullptr);

    void setRuns(const QVector<CompareRun>& runs);
    void setXAxis(XAxis axis);
    void setQuantity(Quantity quantity);
    // TensorBoard-style smoothing of the training loss curves (0: off); each run's raw loss
    // stays, faded. Memory curves are never smoothed.
    void setSmoothing(double weight);
    Quantity quantity() const { return m_quantity; }

    // The graph of run `index` (its main curve), for tests.
    QCPGraph* runGraph(int index) const { return m_runGraphs.value(index); }

protected:
    void fitRanges() override;

private:
    void rebuild();
    void addCaps();

    Quantity m_quantity;
    XAxis m_xAxis = XAxis::Step;
    double m_smoothing = 0;
    QVector<CompareRun> m_runs;
    QVector<QCPGraph*> m_runGraphs;
    Bounds m_x;
    Bounds m_y;
};

}  // namespace oomlab::ui
