// The sawtooth inside training steps: allocated memory at each phase boundary (batch ready,
// after forward, after backward, after the optimizer step) of the steps the engine samples
// in detail (every phase of the first steps and of every 50th), between the step ends.
// x is the optimizer step, with each phase placed inside its step by its time. Zoom in
// (wheel, drag) to see single steps; double-click to follow the run again.
#pragma once

#include <QHash>

#include <optional>
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
    // Places the samples of an unfinished step (an OOM) and marks the end.
    void finish(const QString& marker = {});

    QCPGraph* allocated() const { return m_allocated; }
    QCPGraph* phase(const QString& name) const { return m_phases.value(name); }

protected:
    void fitRanges() override;

private:
    struct Sample {
        double x;
        double allocated;
        std::optional<double> peak;
        QString phase;
    };
    void placePending(double stepEndMs);
    void add(const QVector<Sample>& samples);
    // Steps not sampled are a gap in the lines, not a straight line across them.
    void breakLinesBefore(std::int64_t step);

    QCPGraph* m_allocated = nullptr;
    QCPGraph* m_stepPeak = nullptr;
    QHash<QString, QCPGraph*> m_phases;
    std::vector<MetricRow> m_pending;  // phase samples of the step in progress
    double m_lastStepEndMs = 0;
    double m_lastX = 0;
    std::int64_t m_lastStep = 0;  // the last step sampled
    Bounds m_x;
    Bounds m_y;
};

}  // namespace oomlab::ui
