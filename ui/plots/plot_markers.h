// A plot's labelled lines: markers at a key (an OOM, an adaptation) and levels at a value (a
// memory cap). They belong to the plot's items; this keeps which are which.
#pragma once

#include <QColor>
#include <QRectF>
#include <QString>
#include <QVector>

#include <functional>
#include <utility>

class QCustomPlot;
class QCPGraph;
class QCPItemStraightLine;
class QCPItemText;

namespace oomlab::ui {

class PlotMarkers {
public:
    // `changed` is called after each change, for the plot to redraw.
    PlotMarkers(QCustomPlot* plot, std::function<void()> changed);

    // A labelled vertical line at key `x`.
    void addMarker(double x, const QString& text, const QColor& color);
    // A labelled horizontal line at value `y`, its label under it at the left.
    void addLevel(double y, const QString& text, const QColor& color);
    void clear();
    // Puts each marker's label beside its line on the side with room, as high as it can go
    // without covering any other text on the plot (a cap's label, another marker's) or a
    // curve (the reserved line runs along the top); where every place covers a curve, the
    // one that covers least. Called once the plot is laid out, before it draws.
    void placeLabels();

    int markerCount() const { return m_markers.size(); }
    int levelCount() const { return m_levels.size(); }
    double markerX(int index) const;
    double levelY(int index) const;
    QString levelText(int index) const;
    // Where marker `index`'s label was drawn (pixels, at the last replot).
    QRectF markerLabelRect(int index) const;
    static QRectF labelRect(const QCPItemText* label);
    // How many line segments of `graphs` (the visible ones) pass through `rect`, in pixels.
    static int linesThrough(const QRectF& rect, const QVector<const QCPGraph*>& graphs);

private:
    using Marker = std::pair<QCPItemStraightLine*, QCPItemText*>;
    static constexpr double kTop = 0.02;  // a marker label's place, as a share of the axes

    QCustomPlot* m_plot;
    std::function<void()> m_changed;
    QVector<Marker> m_markers;
    QVector<Marker> m_levels;
};

}  // namespace oomlab::ui
