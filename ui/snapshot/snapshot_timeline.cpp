#include "snapshot/snapshot_timeline.h"

#include <QMouseEvent>

#include <algorithm>
#include <cmath>

#include "common/formatting.h"
#include "plots/memory_axis.h"
#include "plots/series_colors.h"

namespace oomlab::ui {

SnapshotTimeline::SnapshotTimeline(QWidget* parent) : ThemedPlot(parent) {
    setObjectName(QStringLiteral("snapshotTimeline"));
    // Reserved first, so allocated is drawn over it (as in the live memory plot).
    m_reserved = addLineSeries(tr("reserved"), seriesColor(2));
    m_allocated = addLineSeries(tr("allocated"), seriesColor(0));
    m_replayed = addLineSeries(tr("reserved, replayed"), seriesColor(2));
    QPen dashed = m_replayed->pen();
    dashed.setStyle(Qt::DashLine);
    m_replayed->setPen(dashed);
    m_replayed->setVisible(false);
    m_replayed->removeFromLegend();
    xAxis->setLabel(tr("event of the trace"));
    useMemoryAxis(yAxis);
    placeLegendBelow(3);
    m_momentLine = new QCPItemStraightLine(this);
    m_momentLine->setPen(QPen(palette().color(QPalette::WindowText), 1, Qt::DotLine));
    m_momentLine->setVisible(false);
    // A click chooses a moment; a drag pans, as on every plot.
    connect(this, &QCustomPlot::mousePress, this,
            [this](QMouseEvent* event) { m_pressedAt = event->position(); });
    connect(this, &QCustomPlot::mouseRelease, this, [this](QMouseEvent* event) {
        if (event->button() == Qt::LeftButton && m_events > 0 &&
            (event->position() - m_pressedAt).manhattanLength() < 4 &&
            axisRect()->rect().contains(event->position().toPoint())) {
            emit momentChosen(eventAt(event->position().x()));
        }
    });
}

std::size_t SnapshotTimeline::eventAt(double pixelX) const {
    const double event = std::round(xAxis->pixelToCoord(pixelX));
    return event <= 0 ? 0 : std::min(m_events, static_cast<std::size_t>(event));
}

void SnapshotTimeline::showMoment(std::optional<std::size_t> event) {
    m_moment = event;
    m_momentLine->setVisible(event.has_value());
    if (event) {
        m_momentLine->point1->setCoords(double(*event), 0);
        m_momentLine->point2->setCoords(double(*event), 1);
    }
    requestReplot();
}

void SnapshotTimeline::setReplayed(const std::vector<std::pair<std::size_t, std::int64_t>>& line,
                                   const QString& settings) {
    QVector<double> keys, reserved;
    m_y = m_recordedY;
    for (const auto& [event, bytes] : line) {
        keys << double(event);
        reserved << toMiB(bytes);
        m_y.add(toMiB(bytes));
    }
    m_replayed->setData(keys, reserved, true);
    m_replayed->setName(tr("reserved, replayed with %1").arg(settings));
    m_replayed->setVisible(!line.empty());
    if (line.empty()) {
        m_replayed->removeFromLegend();
    } else {
        m_replayed->addToLegend();
    }
    setFollowData(true);  // fitted again: a refused replay leaves no range of its own behind
    requestReplot();
}

void SnapshotTimeline::setDevice(const SnapshotDevice& device) {
    setReplayed({}, QString());
    markers().clear();
    showMoment(std::nullopt);
    m_events = device.events;
    m_x.reset();
    m_y.reset();
    m_recordedY.reset();
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
    m_recordedY = m_y;
    markers().addMarker(double(device.peak_event),
                        tr("peak %1").arg(formatBytes(device.peak_allocated)), seriesColor(1));
    for (const SnapshotOom& oom : device.ooms) {
        markers().addMarker(double(event_number(oom.event)), tr("OOM"), warningColor());
    }
    shadeStages(device);
    setFollowData(true);
    requestReplot();
}

void SnapshotTimeline::shadeStages(const SnapshotDevice& device) {
    for (QCPItemRect* band : m_stageBands) {
        removeItem(band);
    }
    m_stageBands.clear();
    m_shadedStages.clear();
    std::vector<std::uint32_t> order(device.stages.size());
    for (std::uint32_t stage = 0; stage < order.size(); ++stage) {
        order[stage] = stage;
    }
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        return device.stages[a].peak_allocated > device.stages[b].peak_allocated;
    });
    order.resize(std::min(order.size(), kShadedStages));
    m_shadedStages = order;
    // Thousands of bands would hide the lines: each stage shows its first few hundred runs.
    constexpr std::size_t kMostBands = 600;
    for (const SnapshotStageSpan& span : device.stage_spans) {
        const auto shaded = std::find(order.begin(), order.end(), span.stage);
        if (shaded == order.end() || m_stageBands.size() == kMostBands) {
            continue;
        }
        QColor color = seriesColor(3 + int(shaded - order.begin()));
        auto* band = new QCPItemRect(this);
        band->setLayer(QStringLiteral("grid"));
        // A stage that ran between two events (nothing allocated or freed inside) has no
        // width: its edge is drawn, a line where it ran.
        band->setPen(span.end == span.first ? QPen(color, 2) : QPen(Qt::NoPen));
        color.setAlpha(40);
        band->setBrush(color);
        band->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
        band->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
        band->topLeft->setCoords(double(span.first), 0);
        band->bottomRight->setCoords(double(span.end), 1);
        m_stageBands.push_back(band);
    }
}

void SnapshotTimeline::fitRanges() {
    fitAxis(xAxis, m_x, true);
    fitAxis(yAxis, m_y, true);
}

}  // namespace oomlab::ui
