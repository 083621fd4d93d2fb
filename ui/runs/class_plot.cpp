#include "runs/class_plot.h"

#include "plots/line_scale.h"
#include "plots/memory_axis.h"
#include "plots/series_colors.h"

namespace oomlab::ui {
namespace {

// A run's line: thin, so that thirty stay apart and the median stands out.
constexpr double kRunWidth = 1.0;
constexpr double kMedianWidth = 2.0;
constexpr double kCrossSize = 14;

}  // namespace

ClassPlot::ClassPlot(Series series, QWidget* parent) : ThemedPlot(parent), m_series(series) {
    setObjectName(series == Series::Loss ? QStringLiteral("classLossPlot")
                                         : QStringLiteral("classMemoryPlot"));
    // The legend's keys first, so that they come first in it; they hold no point.
    m_running = addLineSeries(tr("running"), seriesColor(0));
    m_done = addLineSeries(tr("done"), Qt::gray);
    m_median = addLineSeries(tr("class median"), foreground());
    setSeriesPen(m_median, QPen(foreground(), kMedianWidth));
    m_outOfMemory = addLineSeries(tr("out of memory"), warningColor());
    m_outOfMemory->setLineStyle(QCPGraph::lsNone);
    m_outOfMemory->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, kCrossSize));
    // The median and the crosses over the runs' lines, however many are added after them.
    addLayer(QStringLiteral("overRuns"), layer(QStringLiteral("main")), QCustomPlot::limAbove);
    m_median->setLayer(QStringLiteral("overRuns"));
    m_outOfMemory->setLayer(QStringLiteral("overRuns"));
    xAxis->setLabel(tr("optimizer step"));
    if (series == Series::Loss) {
        yAxis->setLabel(tr("training loss"));
        setExportTitle(tr("The class: training loss"));
    } else {
        useMemoryAxis(yAxis);
        setExportTitle(tr("The class: memory reserved"));
    }
    placeLegendBelow(4);
    applyPalette();
}

const trackers::StepSeries& ClassPlot::of(const trackers::ClassRun& run) const {
    return m_series == Series::Loss ? run.loss : run.memory;
}

void ClassPlot::showClass(const trackers::ClassProgress& progress) {
    for (QCPGraph* run : m_runs) {
        removeGraph(run);
    }
    m_runs.clear();
    m_runLines = 0;
    m_x.reset();
    m_y.reset();
    m_outOfMemory->data()->clear();
    std::vector<const trackers::StepSeries*> reached;
    for (const trackers::ClassRun& run : progress.runs) {
        const trackers::StepSeries& points = of(run);
        if (points.empty()) {
            continue;
        }
        const bool running = run.status == RunStatus::Running;
        const bool oom = run.status == RunStatus::Oom;
        QColor color = running ? seriesColor(0) : oom ? warningColor() : QColor(Qt::gray);
        color.setAlphaF(running || oom ? 0.8 : 0.55);
        QCPGraph* line = addGraph();
        line->setName(QString::fromStdString(run.student.empty() ? run.name : run.student));
        line->removeFromLegend();
        setSeriesPen(line, QPen(color, kRunWidth));
        QVector<double> steps;
        QVector<double> values;
        for (const trackers::StepValue& point : points) {
            steps << double(point.step);
            values << point.value;
            m_x.add(double(point.step));
            m_y.add(point.value);
        }
        line->setData(steps, values, true);
        m_runs << line;
        ++m_runLines;
        reached.push_back(&points);
        if (oom) {
            m_outOfMemory->addData(steps.back(), values.back());
        }
    }
    QVector<double> steps;
    QVector<double> values;
    for (const trackers::StepValue& point : trackers::class_median(reached)) {
        steps << double(point.step);
        values << point.value;
    }
    m_median->setData(steps, values, true);
    setSeriesPen(m_median, QPen(foreground(), kMedianWidth));
    requestReplot();
}

void ClassPlot::fitRanges() {
    fitAxis(xAxis, m_x, true);
    fitAxis(yAxis, m_y, m_series == Series::Memory);
}

}  // namespace oomlab::ui
