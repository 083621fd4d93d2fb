#include "live/phase_plot.h"

#include <algorithm>

#include "common/formatting.h"
#include "plots/memory_axis.h"
#include "plots/series_colors.h"

namespace oomlab::ui {

PhasePlot::PhasePlot(QWidget* parent) : ThemedPlot(parent) {
    setObjectName(QStringLiteral("phasePlot"));
    m_allocated = addLineSeries(tr("allocated"), seriesColor(0));
    m_stepPeak = addLineSeries(tr("step peak so far"), seriesColor(1));
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
        addToLegend(graph);
        m_phases.insert(name, graph);
    }
    m_phases.value(QStringLiteral("batch"))->setName(tr("batch ready"));
    xAxis->setLabel(tr("optimizer step (phases placed by time)"));
    useMemoryAxis(yAxis);
    placeLegendBelow(4);
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
    markers().clear();
    m_pending.clear();
    m_lastStepEndMs = 0;
    m_lastX = 0;
    m_lastStep = 0;
    m_x.reset();
    m_y.reset();
    xAxis->setRange(0, 1);
    yAxis->setRange(0, 1);
    setFollowData(true);
    requestReplot();
}

void PhasePlot::add(const QVector<Sample>& samples) {
    QVector<double> keys, values, peakKeys, peaks;
    QHash<QString, QPair<QVector<double>, QVector<double>>> byPhase;
    for (const Sample& sample : samples) {
        // Keys must grow for addData(alreadySorted); equal times keep their order.
        const double x = std::max(sample.x, m_lastX);
        m_lastX = x;
        if (sample.phase != QLatin1String("eval")) {
            keys.push_back(x);
            values.push_back(sample.allocated);
        }
        if (sample.peak) {
            peakKeys.push_back(x);
            peaks.push_back(*sample.peak);
            m_y.add(*sample.peak);
        }
        if (m_phases.contains(sample.phase)) {
            byPhase[sample.phase].first.push_back(x);
            byPhase[sample.phase].second.push_back(sample.allocated);
        }
        m_x.add(x);
        m_y.add(sample.allocated);
    }
    m_allocated->addData(keys, values, true);
    m_stepPeak->addData(peakKeys, peaks, true);
    for (auto it = byPhase.begin(); it != byPhase.end(); ++it) {
        m_phases.value(it.key())->addData(it.value().first, it.value().second, true);
    }
}

void PhasePlot::breakLinesBefore(std::int64_t step) {
    if (m_lastStep > 0 && step > m_lastStep + 1) {
        const double x = std::max(m_lastX, static_cast<double>(m_lastStep) + 0.5);
        m_allocated->addData(x, qQNaN());
        m_stepPeak->addData(x, qQNaN());
        m_lastX = x;
    }
    m_lastStep = std::max(m_lastStep, step);
}

void PhasePlot::placePending(double stepEndMs) {
    if (m_pending.empty()) {
        return;
    }
    breakLinesBefore(m_pending.front().step);
    QVector<Sample> samples;
    // The step began when the one before ended, unless the run was held between them (Step,
    // F10): the wait before its first phase counts for no more than the rest of the step, or
    // its phases were squeezed against its end, a spike instead of the sawtooth.
    const double first = m_pending.front().wall_ms;
    const double start = std::max(m_lastStepEndMs, first - (stepEndMs - first));
    const double span = std::max(1e-6, stepEndMs - start);
    for (const MetricRow& row : m_pending) {
        const double fraction = std::clamp((row.wall_ms - start) / span, 0.02, 0.98);
        const double x = static_cast<double>(row.step - 1) + fraction;
        std::optional<double> peak;
        if (row.peak_bytes) {
            peak = toMiB(*row.peak_bytes);
        }
        samples.push_back({x, toMiB(*row.allocated_bytes), peak, qs(row.phase)});
    }
    m_pending.clear();
    add(samples);
}

void PhasePlot::appendRows(const std::vector<MetricRow>& rows) {
    for (const MetricRow& row : rows) {
        if (!row.allocated_bytes) {
            continue;  // validation results carry no memory sample
        }
        if (row.phase != phase::kStep) {
            m_pending.push_back(row);
            continue;
        }
        placePending(row.wall_ms);
        breakLinesBefore(row.step);
        m_lastStepEndMs = row.wall_ms;
        std::optional<double> peak;
        if (row.peak_bytes) {
            peak = toMiB(*row.peak_bytes);
        }
        add({Sample{static_cast<double>(row.step), toMiB(*row.allocated_bytes), peak,
                    QStringLiteral("step")}});
    }
    requestReplot();
}

void PhasePlot::finish(const QString& marker) {
    if (!m_pending.empty()) {
        // The step never ended: spread its samples over the time they took.
        const double end =
            m_pending.back().wall_ms + (m_pending.back().wall_ms - m_lastStepEndMs) * 0.1;
        placePending(end);
    }
    if (!marker.isEmpty() && m_x.valid()) {
        markers().addMarker(m_x.high, marker, warningColor());
    }
    requestReplot();
}

void PhasePlot::fitRanges() {
    fitAxis(xAxis, m_x, true);
    fitAxis(yAxis, m_y, true);
}

}  // namespace oomlab::ui
