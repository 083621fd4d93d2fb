// The sawtooth inside training steps: allocated memory at each phase boundary (batch ready,
// after forward, after backward, after the optimizer step) over wall time. The engine
// samples every phase of the first steps and of every 50th; zoom in (wheel, drag) to see
// single steps, double-click to follow the run again.
#pragma once

#include <QHash>

#include <vector>

#include "oomlab/store/run_store.h"
#include "plots/themed_plot.h"

namespace oomlab::ui {

class PhasePlot : public ThemedPlot {
    Q_OBJECT

public:
    explicit PhasePlot(QWidget* parent = nullptr);

    void reset();
    void appendRows(const std::vector<MetricRow>& rows);
    void markEnd(const QString& text);  // an OOM at the last sample

    QCPGraph* allocated() const { return m_allocated; }
    QCPGraph* phase(const QString& name) const { return m_phases.value(name); }

protected:
    void fitRanges() override;

private:
    QCPGraph* m_allocated = nullptr;
    QCPGraph* m_stepPeak = nullptr;
    QHash<QString, QCPGraph*> m_phases;
    Bounds m_x;
    Bounds m_y;
};

}  // namespace oomlab::ui
