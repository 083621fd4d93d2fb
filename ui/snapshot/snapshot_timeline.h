// A memory snapshot's timeline: what was allocated and reserved after each event of a device's
// trace (MiB), the peak and the out-of-memory events marked.
#pragma once

#include "oomlab/snapshot/snapshot_report.h"
#include "plots/themed_plot.h"

namespace oomlab::ui {

class SnapshotTimeline : public ThemedPlot {
    Q_OBJECT

public:
    explicit SnapshotTimeline(QWidget* parent = nullptr);

    void setDevice(const SnapshotDevice& device);

    QCPGraph* allocated() const { return m_allocated; }
    QCPGraph* reserved() const { return m_reserved; }

protected:
    void fitRanges() override;

private:
    QCPGraph* m_allocated = nullptr;
    QCPGraph* m_reserved = nullptr;
    Bounds m_x;
    Bounds m_y;
};

}  // namespace oomlab::ui
