#include "live/phase_plot.h"

#include "common/formatting.h"
#include "plots/series_colors.h"

namespace oomlab::ui {

PhasePlot::PhasePlot(QWidget* parent) : ThemedPlot(parent) {
    setObjectName(QStringLiteral("phasePlot"));
    m_allocated = addLineSeries(tr("allocated"), seriesColor(0));
    m_stepPeak = addLineSeries(tr("step peak so far"), seriesColor(1), nullptr, Qt::DotLine);
    const QVector<QPair<QString, QCPScatterStyle::ScatterShape>> phases = {
        {QStringLiteral("batch"), QCPScatterStyle::ssSquare},
        {QStringLiteral("forward"), QCPScatterStyle::ssTriangle},
        {QStringLiteral("backward"), QCPScatterStyle::ssTriangleInverted},
        {QStringLiteral("optimizer"), QCPScatterStyle::ssDiamond},
        {QStringLiteral("eval"), QCPScatterStyle::ssStar}};
    int color = 2;
    for (const auto& [name, shape] : phases) {
        QCPGraph* graph = addGraph();
        graph->setName(tr("after %1").arg(name));
        graph->setLineStyle(QCPGraph::lsNone);
        graph->setScatterStyle(QCPScatterStyle(shape, seriesColor(color++), 7));
        m_phases.insert(name, graph);
    }
    m_phases.value(QStringLiteral("batch"))->setName(tr("batch ready"));
    xAxis->setLabel(tr("wall time (s)"));
    yAxis->setLabel(tr("MiB"));
    legend->setVisible(true);
    axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
    axisRect()->setRangeZoom(Qt::Horizontal);
    axisRect()->setRangeDrag(Qt::Horizontal);
    applyPalette();
    reset();
}

void PhasePlot::reset() {
    m_allocated->data()->clear();
    m_stepPeak->data()->clear();
    for (QCPGraph* graph : m_phases) {
        graph->data()->clear();
    }
    clearMarkers();
    m_x.reset();
    m_y.reset();
    xAxis->setRange(0, 1);
    yAxis->setRange(0, 1);
    setFollowData(true);
    requestReplot();
}

void PhasePlot::appendRows(const std::vector<MetricRow>& rows) {
    QVector<double> keys, values, peakKeys, peaks;
    QHash<QString, QPair<QVector<double>, QVector<double>>> byPhase;
    for (const MetricRow& row : rows) {
        if (!row.allocated_bytes) {
            continue;
        }
        const double x = row.wall_ms / 1000.0;
        const double y = toMiB(*row.allocated_bytes);
        const QString phase = qs(row.phase);
        if (phase != QLatin1String("eval")) {
            keys.push_back(x);
            values.push_back(y);
        }
        if (row.peak_bytes) {
            peakKeys.push_back(x);
            peaks.push_back(toMiB(*row.peak_bytes));
            m_y.add(peaks.back());
        }
        if (m_phases.contains(phase)) {
            byPhase[phase].first.push_back(x);
            byPhase[phase].second.push_back(y);
        }
        m_x.add(x);
        m_y.add(y);
    }
    m_allocated->addData(keys, values, true);
    m_stepPeak->addData(peakKeys, peaks, true);
    for (auto it = byPhase.begin(); it != byPhase.end(); ++it) {
        m_phases.value(it.key())->addData(it.value().first, it.value().second, true);
    }
    requestReplot();
}

void PhasePlot::markEnd(const QString& text) {
    if (m_x.valid()) {
        addMarker(m_x.high, text, QColor(0xd6, 0x27, 0x28));
    }
}

void PhasePlot::fitRanges() {
    fitAxis(xAxis, m_x, true);
    fitAxis(yAxis, m_y, true);
}

}  // namespace oomlab::ui
