// Memory per optimizer step: allocated, reserved, the step's peak and device used (MiB),
// with the cap as a horizontal line and out-of-memory errors marked where they happened.
#pragma once

#include <cstdint>
#include <vector>

#include "oomlab/store/run_store.h"
#include "plots/themed_plot.h"

namespace oomlab::ui {

class MemoryPlot : public ThemedPlot {
    Q_OBJECT

public:
    explicit MemoryPlot(QWidget* parent = nullptr);

    void reset(std::int64_t capBytes);
    // On the CPU "device used" is the process's resident memory (libraries included), far
    // above the tensors: it is named so and starts hidden (click its legend entry to show).
    void setCpuDevice(bool cpu);
    void appendRows(const std::vector<MetricRow>& rows);
    void markEvent(const EventRow& event);  // oom, halve, adapt

    QCPGraph* allocated() const { return m_allocated; }
    QCPGraph* reserved() const { return m_reserved; }
    QCPGraph* peak() const { return m_peak; }
    QCPGraph* deviceUsed() const { return m_deviceUsed; }
    bool capVisible() const;
    double capMiB() const;

protected:
    void fitRanges() override;

private:
    QCPGraph* m_allocated = nullptr;
    QCPGraph* m_reserved = nullptr;
    QCPGraph* m_peak = nullptr;
    QCPGraph* m_deviceUsed = nullptr;
    QCPItemStraightLine* m_capLine = nullptr;
    QCPItemText* m_capLabel = nullptr;
    Bounds m_x;
    Bounds m_series[4];  // allocated, reserved, peak, device used
    Bounds m_cap;
};

}  // namespace oomlab::ui
