#include "live/loss_plot.h"

#include <algorithm>
#include <limits>

#include "common/formatting.h"
#include "plots/line_scale.h"
#include "plots/plot_markers.h"
#include "plots/series_colors.h"

namespace oomlab::ui {

LossPlot::LossPlot(QWidget* parent) : ThemedPlot(parent) {
    setObjectName(QStringLiteral("lossPlot"));
    m_train = addLineSeries(tr("training loss"), seriesColor(0));
    m_smoothed = addLineSeries(tr("training loss, smoothed"), seriesColor(0));
    m_smoothed->removeFromLegend();  // one entry for the training loss, as in TensorBoard
    setSeriesPen(m_smoothed, QPen(seriesColor(0), 2));
    m_validLoss = addLineSeries(tr("validation loss"), seriesColor(1));
    m_validLoss->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 6));
    m_validAccuracy =
        addLineSeries(tr("validation accuracy (%)"), seriesColor(2), yAxis2, Qt::DashLine);
    m_validAccuracy->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDiamond, 7));
    // The figure a run is judged by, readable without hovering: at the last evaluation, over
    // and left of its point, so it stays inside the axes at the run's end.
    m_accuracyLabel = new QCPItemText(this);
    m_accuracyLabel->position->setAxes(xAxis, yAxis2);
    m_accuracyLabel->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
    m_accuracyLabel->setColor(seriesColor(2));
    QFont bold = m_accuracyLabel->font();
    bold.setBold(true);
    m_accuracyLabel->setFont(bold);
    xAxis->setLabel(tr("optimizer step"));
    yAxis->setLabel(tr("loss"));
    yAxis2->setVisible(true);
    yAxis2->setLabel(tr("accuracy %"));
    yAxis2->setRange(0, 100);
    placeLegendBelow(3);
    axisRect()->setRangeZoomAxes(xAxis, yAxis);
    applyPalette();
    setSmoothing(0);
    reset();
}

void LossPlot::reset() {
    for (QCPGraph* graph : {m_train, m_smoothed, m_validLoss, m_validAccuracy}) {
        graph->data()->clear();
    }
    m_smoother.reset();
    markers().clear();
    m_accuracyLabel->setVisible(false);
    m_accuracyLabel->setText({});
    m_x.reset();
    m_loss.reset();
    xAxis->setRange(0, 10);
    yAxis->setRange(0, 1);
    setFollowData(true);
    requestReplot();
}

void LossPlot::appendRows(const std::vector<MetricRow>& rows) {
    QVector<double> trainX, trainY, evalX, evalLoss, accX, accY;
    for (const MetricRow& row : rows) {
        const double x = static_cast<double>(row.step);
        if (row.phase == phase::kStep && row.loss) {
            trainX.push_back(x);
            trainY.push_back(*row.loss);
        } else if (row.phase == phase::kEval) {
            if (row.loss) {
                evalX.push_back(x);
                evalLoss.push_back(*row.loss);
            }
            if (row.accuracy) {
                accX.push_back(x);
                accY.push_back(*row.accuracy * 100.0);
            }
        } else {
            continue;
        }
        m_x.add(x);
    }
    for (double value : trainY) {
        m_loss.add(value);
    }
    for (double value : evalLoss) {
        m_loss.add(value);
    }
    m_train->addData(trainX, trainY, true);
    if (m_smoothed->visible()) {
        m_smoothed->addData(trainX, m_smoother.smooth(trainY), true);
    }
    m_validLoss->addData(evalX, evalLoss, true);
    m_validAccuracy->addData(accX, accY, true);
    if (!accX.isEmpty()) {
        m_accuracyLabel->position->setCoords(accX.back(), accY.back());
        m_accuracyLabel->setText(formatPercent(accY.back() / 100.0));
        m_accuracyLabel->setVisible(true);
    }
    requestReplot();
}

QString LossPlot::latestAccuracyText() const {
    return m_accuracyLabel->text();
}

QRectF LossPlot::accuracyLabelRect() const {
    return PlotMarkers::labelRect(m_accuracyLabel);
}

int LossPlot::lossLinesUnderAccuracyLabel(Qt::Alignment alignment) {
    m_accuracyLabel->setPositionAlignment(alignment);
    const QRectF label = PlotMarkers::labelRect(m_accuracyLabel);
    if (!axisRect()->rect().contains(label.toRect())) {
        return std::numeric_limits<int>::max();  // cut at the axes' edge
    }
    return PlotMarkers::linesThrough(label, {m_train, m_smoothed, m_validLoss});
}

void LossPlot::placeItems() {
    if (m_accuracyLabel->visible()) {
        const Qt::Alignment over = Qt::AlignRight | Qt::AlignBottom;
        const Qt::Alignment under = Qt::AlignRight | Qt::AlignTop;
        const int coveredOver = lossLinesUnderAccuracyLabel(over);
        if (coveredOver == 0 || lossLinesUnderAccuracyLabel(under) >= coveredOver) {
            m_accuracyLabel->setPositionAlignment(over);
        }
    }
    ThemedPlot::placeItems();
}

void LossPlot::setSmoothing(double weight) {
    m_smoother = LossSmoother(std::clamp(weight, 0.0, LossSmoother::kMaxWeight));
    const bool on = m_smoother.weight() > 0;
    QColor raw = seriesColor(0);
    raw.setAlphaF(on ? 0.3 : 1.0);
    setSeriesPen(m_train, QPen(raw, 1.0));
    m_smoothed->setVisible(on);
    m_smoothed->data()->clear();
    if (on) {
        QVector<double> keys, values;
        for (const QCPGraphData& point : *m_train->data()) {
            keys.push_back(point.key);
            values.push_back(point.value);
        }
        m_smoothed->setData(keys, m_smoother.smooth(values), true);
    }
    requestReplot();
}

void LossPlot::keepAsEarlierRun(const QString& name) {
    m_earlier.keep(smoothing() > 0 ? m_smoothed : m_train, tr("%1: training loss").arg(name));
}

void LossPlot::fitRanges() {
    Bounds x = m_x;
    Bounds loss = m_loss;
    m_earlier.addBounds(x, loss);
    fitAxis(xAxis, x, true);
    fitAxis(yAxis, loss, false);
}

}  // namespace oomlab::ui
