#include "plots/earlier_runs.h"

#include <iterator>

#include "plots/line_scale.h"

namespace oomlab::ui {
namespace {

const char* const kLayer = "earlierRuns";

}  // namespace

EarlierRuns::EarlierRuns(ThemedPlot* plot) : m_plot(plot) {}

void EarlierRuns::keep(const QCPGraph* line, const QString& name) {
    if (!m_plot->layer(kLayer)) {
        m_plot->addLayer(kLayer, m_plot->layer(QStringLiteral("main")), QCustomPlot::limBelow);
    }
    static const Qt::PenStyle kStyles[] = {Qt::DashLine, Qt::DotLine, Qt::DashDotLine,
                                           Qt::DashDotDotLine};
    QColor grey = m_plot->foreground();
    grey.setAlphaF(0.55);
    QCPGraph* copy = m_plot->addLineSeries(name, grey, line->valueAxis(),
                                           kStyles[m_lines.size() % std::size(kStyles)]);
    setSeriesPen(copy, QPen(grey, 1.5, copy->pen().style()));
    copy->setLayer(kLayer);
    copy->data()->set(*line->data());
    for (const QCPGraphData& point : *line->data()) {
        m_keys.add(point.key);
        m_values.add(point.value);
    }
    m_lines.push_back(copy);
    m_plot->requestReplot();
}

void EarlierRuns::clear() {
    for (QCPGraph* line : m_lines) {
        m_plot->removeGraph(line);
    }
    m_lines.clear();
    m_keys.reset();
    m_values.reset();
    m_plot->requestReplot();
}

void EarlierRuns::addBounds(Bounds& keys, Bounds& values) const {
    if (m_keys.valid()) {
        keys.add(m_keys.low);
        keys.add(m_keys.high);
        values.add(m_values.low);
        values.add(m_values.high);
    }
}

}  // namespace oomlab::ui
