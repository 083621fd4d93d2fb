// A plot's labelled lines: markers at a key (an OOM, an adaptation) and levels at a value (a
// memory cap).
#include <QApplication>

#include "plots/themed_plot.h"

namespace oomlab::ui {

void ThemedPlot::addMarker(double x, const QString& text, const QColor& color) {
    auto* line = new QCPItemStraightLine(this);
    line->point1->setTypeX(QCPItemPosition::ptPlotCoords);
    line->point1->setTypeY(QCPItemPosition::ptAxisRectRatio);
    line->point2->setTypeX(QCPItemPosition::ptPlotCoords);
    line->point2->setTypeY(QCPItemPosition::ptAxisRectRatio);
    line->point1->setCoords(x, 0);
    line->point2->setCoords(x, 1);
    line->setPen(QPen(color, 2, Qt::DashLine));
    auto* label = new QCPItemText(this);
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
    requestReplot();
}

void ThemedPlot::addLevel(double y, const QString& text, const QColor& color) {
    auto* line = new QCPItemStraightLine(this);
    line->point1->setCoords(0, y);
    line->point2->setCoords(1, y);
    line->setPen(QPen(color, 2, Qt::DashDotLine));
    auto* label = new QCPItemText(this);
    label->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
    label->position->setTypeY(QCPItemPosition::ptPlotCoords);
    label->position->setCoords(0.01, y);
    label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    label->setText(text);
    label->setColor(color);
    label->setFont(QApplication::font());
    m_levels.push_back({line, label});
    requestReplot();
}

double ThemedPlot::levelY(int index) const {
    return m_levels.at(index).first->point1->value();
}

QString ThemedPlot::levelText(int index) const {
    return m_levels.at(index).second->text();
}

void ThemedPlot::clearMarkers() {
    for (const auto& [line, label] : m_markers + m_levels) {
        removeItem(line);
        removeItem(label);
    }
    m_markers.clear();
    m_levels.clear();
}

double ThemedPlot::markerX(int index) const {
    return m_markers.at(index).first->point1->key();
}

QRectF ThemedPlot::labelRect(const QCPItemText* label) {
    return QRectF(label->topLeft->pixelPosition(), label->bottomRight->pixelPosition());
}

QRectF ThemedPlot::markerLabelRect(int index) const {
    return labelRect(m_markers.at(index).second);
}

}  // namespace oomlab::ui
