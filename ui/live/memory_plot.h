// Memory per optimizer step: allocated, reserved, the step's peak, device used and, on CUDA,
// what is outside the allocator (device used minus reserved: the CUDA context, the libraries'
// handles, NCCL's buffers, other processes) in MiB, with the cap as a horizontal line and
// out-of-memory errors marked where they happened. In a data-parallel run the series are rank 0's,
// and each other rank adds its step peak.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "oomlab/store/run_store.h"
#include "plots/earlier_runs.h"
#include "plots/themed_plot.h"

namespace oomlab::ui {

class MemoryPlot : public ThemedPlot {
    Q_OBJECT

public:
    explicit MemoryPlot(QWidget* parent = nullptr);

    // Clears the run's lines; an earlier run's stay until earlierRuns().clear().
    void reset(std::int64_t capBytes);
    // The step peak as drawn now stays, as the line of an earlier run named `name`.
    void keepAsEarlierRun(const QString& name);
    EarlierRuns& earlierRuns() { return m_earlier; }
    // On the CPU "device used" is the process's resident memory (libraries included), far
    // above the tensors: it is named so and starts hidden (click its legend entry to show).
    void setCpuDevice(bool cpu);
    void appendRows(const std::vector<MetricRow>& rows);
    void markEvent(const EventRow& event);  // oom, halve, adapt

    QCPGraph* allocated() const { return m_allocated; }
    QCPGraph* reserved() const { return m_reserved; }
    QCPGraph* peak() const { return m_peak; }
    QCPGraph* deviceUsed() const { return m_deviceUsed; }
    QCPGraph* outsideAllocator() const { return m_outside; }
    // The step peak of rank `rank` > 0 of a data-parallel run; null until it has rows.
    QCPGraph* rankPeak(int rank) const;
    bool capVisible() const;
    double capMiB() const;
    QRectF capLabelRect() const {
        return PlotMarkers::labelRect(m_capLabel);
    }  // at the last replot

protected:
    void fitRanges() override;
    // The cap's label, once the axes have their size for this drawing, then the markers'.
    void placeItems() override;

private:
    QCPGraph* addRankPeak(int rank);
    void placeCapLabel();

    QCPGraph* m_allocated = nullptr;
    QCPGraph* m_reserved = nullptr;
    QCPGraph* m_peak = nullptr;
    QCPGraph* m_deviceUsed = nullptr;
    QCPGraph* m_outside = nullptr;
    QCPItemStraightLine* m_capLine = nullptr;
    QCPItemText* m_capLabel = nullptr;
    Bounds m_x;
    Bounds m_series[5];  // allocated, reserved, peak, device used, outside the allocator
    Bounds m_cap;
    std::map<int, QCPGraph*> m_rankPeaks;
    EarlierRuns m_earlier{this};
};

}  // namespace oomlab::ui
