#include "plots/plot_markers.h"

#include <QApplication>

#include <algorithm>

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
    label->position->setCoords(x, kTop);
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

void PlotMarkers::placeLabels() {
    const QRectF axes = m_plot->axisRect()->rect();
    if (axes.height() <= 0) {
        return;
    }
    // Every other text of the plot a label must not cover: levels, a subclass's own labels,
    // and the markers' labels placed before it.
    QVector<const QCPItemText*> placed;
    for (int i = 0; i < m_plot->itemCount(); ++i) {
        const auto* text = qobject_cast<const QCPItemText*>(m_plot->item(i));
        const bool marker = std::any_of(m_markers.begin(), m_markers.end(),
                                        [text](const Marker& m) { return m.second == text; });
        if (text && text->visible() && !marker) {
            placed << text;
        }
    }
    QVector<const QCPGraph*> curves;
    for (int i = 0; i < m_plot->graphCount(); ++i) {
        curves << m_plot->graph(i);
    }
    const auto textUnder = [&placed](const QRectF& rect) {
        return std::find_if(placed.begin(), placed.end(),
                            [&](auto* other) { return rect.intersects(labelRect(other)); });
    };
    for (const auto& [line, label] : m_markers) {
        const double x = line->point1->key();
        label->position->setCoords(x, kTop);
        // Left of its line, unless that is outside the axes (a run out of memory at step 1).
        label->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
        if (labelRect(label).left() < axes.left()) {
            label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
        }
        // Places down the line, half a label apart, from the top to the axes' bottom.
        const double height = labelRect(label).height();
        const double first = axes.top() + kTop * axes.height();
        double best = first;
        int bestCrossed = -1;
        for (double top = first; top == first || top + height <= axes.bottom();
             top += std::max(1.0, height / 2)) {
            label->position->setCoords(x, (top - axes.top()) / axes.height());
            const QRectF rect = labelRect(label);
            if (textUnder(rect) != placed.end()) {
                continue;
            }
            const int crossed = linesThrough(rect, curves);
            if (bestCrossed < 0 || crossed < bestCrossed) {
                best = top;
                bestCrossed = crossed;
            }
            if (crossed == 0) {
                break;
            }
        }
        label->position->setCoords(x, (best - axes.top()) / axes.height());
        if (bestCrossed < 0) {  // no place in the axes clear of text: below what it covers
            label->position->setCoords(x, kTop);
            for (int moves = 0; moves <= placed.size(); ++moves) {
                const auto covered = textUnder(labelRect(label));
                if (covered == placed.end()) {
                    break;
                }
                const double below = labelRect(*covered).bottom() + 1;
                label->position->setCoords(x, (below - axes.top()) / axes.height());
            }
        }
        placed << label;
    }
}

int PlotMarkers::linesThrough(const QRectF& rect, const QVector<const QCPGraph*>& graphs) {
    int crossed = 0;
    for (const QCPGraph* graph : graphs) {
        if (!graph->visible() || graph->data()->isEmpty()) {
            continue;
        }
        const QCPAxis* keys = graph->keyAxis();
        const QCPAxis* values = graph->valueAxis();
        const double from = keys->pixelToCoord(rect.left());
        const double to = keys->pixelToCoord(rect.right());
        // Each segment with an end inside the rectangle's columns, clipped to them: it crosses
        // where the values it takes there meet the rectangle's rows.
        auto point = graph->data()->findBegin(std::min(from, to), true);
        const auto end = graph->data()->findEnd(std::max(from, to), true);
        for (auto next = point; next != end && ++next != end; point = next) {
            const QPointF a(keys->coordToPixel(point->key), values->coordToPixel(point->value));
            const QPointF b(keys->coordToPixel(next->key), values->coordToPixel(next->value));
            if (qIsNaN(a.y()) || qIsNaN(b.y())) {
                continue;  // a gap in the line
            }
            const double left = std::max(rect.left(), std::min(a.x(), b.x()));
            const double right = std::min(rect.right(), std::max(a.x(), b.x()));
            if (left > right) {
                continue;
            }
            const auto yAt = [&](double px) {
                return a.y() + (b.y() - a.y()) * (px - a.x()) / (b.x() - a.x());
            };
            const bool upright = a.x() == b.x();
            const double y1 = upright ? a.y() : yAt(left);
            const double y2 = upright ? b.y() : yAt(right);
            crossed += std::max(y1, y2) >= rect.top() && std::min(y1, y2) <= rect.bottom();
        }
    }
    return crossed;
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
