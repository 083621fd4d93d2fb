#include "snapshot/snapshot_timeline.h"

#include "common/formatting.h"
#include "plots/series_colors.h"

namespace oomlab::ui {

SnapshotTimeline::SnapshotTimeline(QWidget* parent) : ThemedPlot(parent) {
    setObjectName(QStringLiteral("snapshotTimeline"));
    // Reserved first, so allocated is drawn over it (as in the live memory plot).
    m_reserved = addLineSeries(tr("reserved"), seriesColor(2));
    m_allocated = addLineSeries(tr("allocated"), seriesColor(0));
    xAxis->setLabel(tr("event of the trace"));
    yAxis->setLabel(tr("MiB"));
    placeLegendBelow(2);
}

void SnapshotTimeline::setDevice(const SnapshotDevice& device) {
    clearMarkers();
    m_x.reset();
    m_y.reset();
    QVector<double> keys, allocated, reserved;
    for (const SnapshotPoint& point : device.timeline) {
        keys << double(point.event);
        allocated << toMiB(point.allocated);
        reserved << toMiB(point.reserved);
        m_x.add(double(point.event));
        m_y.add(toMiB(point.reserved));
        m_y.add(toMiB(point.allocated));
    }
    m_allocated->setData(keys, allocated, true);
    m_reserved->setData(keys, reserved, true);
    addMarker(double(device.peak_event), tr("peak %1").arg(formatBytes(device.peak_allocated)),
              seriesColor(1));
    for (const SnapshotOom& oom : device.ooms) {
        addMarker(double(oom.event), tr("OOM"), warningColor());
    }
    setFollowData(true);
    requestReplot();
}

void SnapshotTimeline::fitRanges() {
    fitAxis(xAxis, m_x, true);
    fitAxis(yAxis, m_y, true);
}

}  // namespace oomlab::ui
