#include "plots/plot_markers.h"

#include <QApplication>

#include <qcustomplot.h>

namespace oomlab::ui {

PlotMarkers::PlotMarkers(QCustomPlot* plot, std::function<void()> changed)
    : m_plot(plot), m_changed(std::move(changed)) {}

void PlotMarkers::addMarker(double x, const QString& text, const QColor& color) {
    auto* line = new QCPItemStraightLine(m_plot);
    line->point1->setTypeX(QCPItemPosition::ptPlotCoords);
    line->point1->setTypeY(QCPItemPosition::ptAxisRectRatio);
    line->point2->setTypeX(QCPItemPosition::ptPlotCoords);
    line->point2->setTypeY(QCPItemPosition::ptAxisRectRatio);
    line->point1->setCoords(x, 0);
    line->point2->setCoords(x, 1);
    line->setPen(QPen(color, 2, Qt::DashLine));
    auto* label = new QCPItemText(m_plot);
    label->position->setTypeX(QCPItemPosition::ptPlotCoords);
    label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    label->position->setCoords(x, 0.02);
    label->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
    label->setPadding(QMargins(2, 0, 4, 0));
    label->setText(text);
    label->setColor(color);
    QFont font = QApplication::font();
    font.setBold(true);
    label->setFont(font);
    m_markers.push_back({line, label});
    m_changed();
}

void PlotMarkers::addLevel(double y, const QString& text, const QColor& color) {
    auto* line = new QCPItemStraightLine(m_plot);
    line->point1->setCoords(0, y);
    line->point2->setCoords(1, y);
    line->setPen(QPen(color, 2, Qt::DashDotLine));
    auto* label = new QCPItemText(m_plot);
    label->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
    label->position->setTypeY(QCPItemPosition::ptPlotCoords);
    label->position->setCoords(0.01, y);
    label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    label->setText(text);
    label->setColor(color);
    label->setFont(QApplication::font());
    m_levels.push_back({line, label});
    m_changed();
}

void PlotMarkers::clear() {
    for (const auto& [line, label] : m_markers + m_levels) {
        m_plot->removeItem(line);
        m_plot->removeItem(label);
    }
    m_markers.clear();
    m_levels.clear();
}

double PlotMarkers::markerX(int index) const {
    return m_markers.at(index).first->point1->key();
}

double PlotMarkers::levelY(int index) const {
    return m_levels.at(index).first->point1->value();
}

QString PlotMarkers::levelText(int index) const {
    return m_levels.at(index).second->text();
}

QRectF PlotMarkers::labelRect(const QCPItemText* label) {
    return QRectF(label->topLeft->pixelPosition(), label->bottomRight->pixelPosition());
}

QRectF PlotMarkers::markerLabelRect(int index) const {
    return labelRect(m_markers.at(index).second);
}

}  // namespace oomlab::ui
