#include "live/memory_plot.h"

#include "common/formatting.h"
#include "plots/memory_axis.h"
#include "plots/series_colors.h"

namespace oomlab::ui {
namespace {

void appendOptional(QVector<double>& keys, QVector<double>& values, double x,
                    const std::optional<std::int64_t>& bytes, Bounds& bounds) {
    if (bytes) {
        keys.push_back(x);
        values.push_back(toMiB(*bytes));
        bounds.add(values.back());
    }
}

}  // namespace

MemoryPlot::MemoryPlot(QWidget* parent) : ThemedPlot(parent) {
    setObjectName(QStringLiteral("memoryPlot"));
    // Reserved first so that allocated is drawn over it: on the CPU they are equal; on CUDA
    // the gap is the caching allocator's cache. (No filled area: filling a long, jagged run
    // costs ~100 ms per redraw.)
    m_reserved = addLineSeries(tr("reserved"), seriesColor(2));
    m_allocated = addLineSeries(tr("allocated"), seriesColor(0));
    m_peak = addLineSeries(tr("step peak"), seriesColor(1));
    m_deviceUsed = addLineSeries(tr("device used"), seriesColor(4));
    m_outside = addLineSeries(tr("outside the allocator"), seriesColor(3), nullptr, Qt::DotLine);
    xAxis->setLabel(tr("optimizer step"));
    useMemoryAxis(yAxis);
    placeLegendBelow(5);
    m_capLine = new QCPItemStraightLine(this);
    m_capLine->setPen(QPen(warningColor(), 2, Qt::DashDotLine));
    m_capLabel = new QCPItemText(this);
    m_capLabel->setColor(warningColor());
    m_capLabel->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
    m_capLabel->position->setTypeY(QCPItemPosition::ptPlotCoords);
    m_capLabel->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
    applyPalette();
    reset(0);
}

void MemoryPlot::reset(std::int64_t capBytes) {
    for (QCPGraph* graph : {m_allocated, m_reserved, m_peak, m_deviceUsed, m_outside}) {
        graph->data()->clear();
    }
    markers().clear();
    for (const auto& [rank, graph] : m_rankPeaks) {
        removeGraph(graph);
    }
    m_rankPeaks.clear();
    m_x.reset();
    for (Bounds& bounds : m_series) {
        bounds.reset();
    }
    m_cap.reset();
    const bool capped = capBytes > 0;
    m_capLine->setVisible(capped);
    m_capLabel->setVisible(capped);
    if (capped) {
        const double cap = toMiB(capBytes);
        m_capLine->point1->setCoords(0, cap);
        m_capLine->point2->setCoords(1, cap);
        m_capLabel->position->setCoords(0.01, cap);
        m_capLabel->setText(tr("cap %1").arg(formatBytes(capBytes)));
        m_cap.add(cap);
    }
    xAxis->setRange(0, 10);
    yAxis->setRange(0, capped ? toMiB(capBytes) * 1.1 : 1);
    setFollowData(true);
    requestReplot();
}

bool MemoryPlot::capVisible() const {
    return m_capLine->visible();
}

double MemoryPlot::capMiB() const {
    return m_capLine->point1->value();
}

void MemoryPlot::appendRows(const std::vector<MetricRow>& rows) {
    QVector<double> ax, ay, rx, ry, px, py, dx, dy, ox, oy;
    for (const MetricRow& row : rows) {
        if (row.phase != phase::kStep) {
            continue;
        }
        const double x = static_cast<double>(row.step);
        m_x.add(x);
        if (row.rank > 0) {
            if (row.peak_bytes) {
                addRankPeak(row.rank)->addData(x, toMiB(*row.peak_bytes));
                m_series[2].add(toMiB(*row.peak_bytes));
            }
            continue;
        }
        appendOptional(ax, ay, x, row.allocated_bytes, m_series[0]);
        appendOptional(rx, ry, x, row.reserved_bytes, m_series[1]);
        appendOptional(px, py, x, row.peak_bytes, m_series[2]);
        appendOptional(dx, dy, x, row.device_used_bytes, m_series[3]);
        if (row.device_used_bytes && row.reserved_bytes) {
            appendOptional(ox, oy, x, *row.device_used_bytes - *row.reserved_bytes, m_series[4]);
        }
    }
    m_allocated->addData(ax, ay, true);
    m_reserved->addData(rx, ry, true);
    m_peak->addData(px, py, true);
    m_deviceUsed->addData(dx, dy, true);
    m_outside->addData(ox, oy, true);
    requestReplot();
}

QCPGraph* MemoryPlot::rankPeak(int rank) const {
    const auto found = m_rankPeaks.find(rank);
    return found == m_rankPeaks.end() ? nullptr : found->second;
}

QCPGraph* MemoryPlot::addRankPeak(int rank) {
    if (QCPGraph* graph = rankPeak(rank)) {
        return graph;
    }
    QCPGraph* graph = addLineSeries(tr("step peak, rank %1").arg(rank), seriesColor(4 + rank),
                                    nullptr, Qt::DashLine);
    m_rankPeaks[rank] = graph;
    return graph;
}

void MemoryPlot::markEvent(const EventRow& event) {
    const double x = static_cast<double>(event.step);
    if (event.kind == event_kind::kOom) {
        markers().addMarker(x, tr("OOM"), warningColor());
    } else if (event.kind == event_kind::kAdapt || event.kind == event_kind::kHalve) {
        markers().addMarker(x, event.kind == event_kind::kAdapt ? tr("adapted") : tr("halved"),
                            seriesColor(4));
    } else {
        return;
    }
    m_x.add(x);
}

void MemoryPlot::setCpuDevice(bool cpu) {
    m_deviceUsed->setName(cpu ? tr("process RSS") : tr("device used"));
    m_reserved->setName(cpu ? tr("reserved (= allocated on the CPU)") : tr("reserved"));
    setSeriesVisible(m_deviceUsed, !cpu);
    // The CPU has no device: its process memory beyond the tensors is no allocator's outside.
    setSeriesVisible(m_outside, !cpu);
}

void MemoryPlot::keepAsEarlierRun(const QString& name) {
    m_earlier.keep(m_peak, tr("%1: step peak").arg(name));
}

void MemoryPlot::fitRanges() {
    Bounds x = m_x;
    Bounds y = m_cap;
    m_earlier.addBounds(x, y);
    fitAxis(xAxis, x, true);
    const QCPGraph* graphs[] = {m_allocated, m_reserved, m_peak, m_deviceUsed, m_outside};
    for (int i = 0; i < 5; ++i) {
        if (graphs[i]->visible() && m_series[i].valid()) {
            y.add(m_series[i].low);
            y.add(m_series[i].high);
        }
    }
    fitAxis(yAxis, y, true);
}

// The cap's label sits over its line at the left; the markers' labels move out of its way. The axis
// keeps a label's height of room over the cap, so the label is never cut at the top; on a plot too
// low for that, the label goes under the line.
void MemoryPlot::placeCapLabel() {
    if (!m_capLine || !m_capLine->visible()) {  // laid out while it is being made
        return;
    }
    const double height = axisRect()->height();
    const QMargins padding = m_capLabel->padding();
    const double label =
        QFontMetrics(m_capLabel->font()).height() + padding.top() + padding.bottom() + 2;
    const double share = height > 0 ? label / height : 1.0;
    const bool over = share < 0.34;
    if (over && followsData()) {  // a range the user chose stays as it is
        const QCPRange range = yAxis->range();
        const double upper = (capMiB() - share * range.lower) / (1 - share);
        if (upper > range.upper) {
            yAxis->setRangeUpper(upper);
        }
    }
    m_capLabel->setPositionAlignment(Qt::AlignLeft | (over ? Qt::AlignBottom : Qt::AlignTop));
}

void MemoryPlot::placeItems() {
    placeCapLabel();
    ThemedPlot::placeItems();  // the markers' labels, clear of the cap's
}

}  // namespace oomlab::ui
