// A QCustomPlot that follows the system palette (light or dark), coalesces redraws and
// follows its data until the user zooms or drags. What it draws besides the data lives in
// classes of its own: labelled lines (plot_markers.h), the legend's wrapping (legend_wrap.h),
// the hover tip (hover_values.h), presentation mode's line widths (line_scale.h).
//
// Appending code adds points with addData(..., alreadySorted=true), extends the bounds with
// noteX()/noteY() and calls requestReplot(): at most one replot per kReplotIntervalMs, done
// with rpQueuedReplot.
#pragma once

#include <QTimer>

#include <limits>

#include <qcustomplot.h>

#include "plots/plot_markers.h"

namespace oomlab::ui {

// A running [min, max] of the data, so ranges never need a pass over all points.
struct Bounds {
    double low = std::numeric_limits<double>::infinity();
    double high = -std::numeric_limits<double>::infinity();

    void add(double value) {
        if (value < low) {
            low = value;
        }
        if (value > high) {
            high = value;
        }
    }
    bool valid() const { return low <= high; }
    void reset() { *this = Bounds(); }
};

class ThemedPlot : public QCustomPlot {
    Q_OBJECT

public:
    static constexpr int kReplotIntervalMs = 40;  // at most 25 redraws per second
    static constexpr int kHoverPixels = 6;        // how near the cursor a point must be

    explicit ThemedPlot(QWidget* parent = nullptr);

    // A line series with the given colour on xAxis and `valueAxis` (yAxis by default), in
    // the legend.
    QCPGraph* addLineSeries(const QString& name, const QColor& color, QCPAxis* valueAxis = nullptr,
                            Qt::PenStyle style = Qt::SolidLine);

    void requestReplot();
    // Follow the data (the default) or keep the user's zoom. Double-click returns to following.
    void setFollowData(bool follow);
    bool followsData() const { return m_follow; }
    int coalescedReplots() const { return m_replots; }

    // Labelled lines: markers at a key (an OOM, an adaptation), levels at a value (a cap).
    PlotMarkers& markers() { return m_markers; }
    const PlotMarkers& markers() const { return m_markers; }

    // Puts `series` in the legend (an entry that elides its text on a narrow plot).
    void addToLegend(QCPAbstractPlottable* series);

    // What the cursor at `pixel` points at, as the hover tip shows it: the x value and each
    // visible series' value nearest to it ("optimizer step 120 · training loss: 1.234").
    // Empty outside the axes.
    virtual QString valuesAt(const QPointF& pixel) const;

    // Moves the legend out of the data into a row under the axes, at most `maxColumns`
    // entries wide: fewer when the plot is too narrow for them (the legend wraps).
    void placeLegendBelow(int maxColumns);
    int legendColumns() const { return m_legendBelow ? legend->wrap() : 0; }

    // Small enough for a 1024×768 screen beside the experiment panel, whatever the legend
    // holds: the legend wraps to fit instead of widening the window.
    QSize minimumSizeHint() const override;
    QSize sizeHint() const override { return minimumSizeHint(); }  // plots take what is left
    // How many lines of text the data area needs at least (5 by default: a curve's shape
    // read from the back of a room; 3 were about 70 px at a projector's text size); the minimum
    // size adds the axes' ticks and labels and the legend's rows.
    void setMinimumDataLines(int lines);
    int minimumDataLines() const { return m_minimumDataLines; }

    // Shows or hides a series; its legend entry stays, greyed out. Clicking an entry toggles.
    void setSeriesVisible(QCPAbstractPlottable* series, bool visible);

    // A title above the axes (exported figures carry one); empty removes it.
    void setTitle(const QString& title);
    // The title an exported image gets when the plot shows none ("Run 3 (trec): loss").
    void setExportTitle(const QString& title) { m_exportTitle = title; }
    QString exportTitle() const { return m_exportTitle; }
    // "run-12-fortunes-memory-per-step.png": from the export title, else the object's name.
    QString suggestedFileName() const;
    // Saves the plot as PNG, PDF or SVG (see savePlot) with its export title and legend;
    // returns an empty string or what went wrong.
    QString exportImage(const QString& path);
    // Fits the ranges and draws at once, for rendering without an event loop (exports).
    void renderNow();

    // Applies the current palette to axes, grid, legend and background.
    void applyPalette();
    // The text colour of the palette, for items drawn on the plot.
    QColor foreground() const;

signals:
    void followDataChanged(bool follow);

protected:
    // Sets the axis ranges from the tracked bounds; called before a coalesced replot while
    // following the data.
    virtual void fitRanges() {}
    // Fits text on the axes to their length before a redraw (ticks are already fitted);
    // bar charts elide their bar names here.
    virtual void fitAxisLabels() {}
    // Places text drawn on the data once the plot is laid out, before it draws; a plot
    // with labels of its own places them and then calls this, which places the markers'.
    virtual void placeItems() { m_markers.placeLabels(); }
    // Sets `axis` to [bounds.low, bounds.high] with a margin; `fromZero` anchors it at 0.
    static void fitAxis(QCPAxis* axis, const Bounds& bounds, bool fromZero);

    void changeEvent(QEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mouseDoubleClickEvent(QMouseEvent* event) override;
    void contextMenuEvent(QContextMenuEvent* event) override;

    // Sets the data area's minimum for the current font and lays the plot out, so that
    // minimumSizeHint() is current; tells the parent layouts when it changed.
    void updateMinimumSize();

private:
    void replotNow();
    void thinGraphs();  // each graph to at most kMostGraphPoints (graph_thinning.h)
    void noteMinimumSize();
    // Fewer ticks on a short axis (a small window, presentation mode), so labels never overlap.
    void fitTickCounts();
    // Chooses the most legend columns (up to the maximum) whose entries fit the width.
    void wrapLegend();

    QTimer m_replotTimer;
    QCPTextElement* m_title = nullptr;
    PlotMarkers m_markers;
    bool m_follow = true;
    bool m_legendBelow = false;
    QSize m_laidOutMinimum;
    QString m_exportTitle;
    int m_legendMaxColumns = 1;
    int m_minimumDataLines = 5;
    int m_replots = 0;
};

}  // namespace oomlab::ui
