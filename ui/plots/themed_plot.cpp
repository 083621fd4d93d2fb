#include "plots/themed_plot.h"

#include <QApplication>
#include <QEvent>
#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <optional>

#include "plots/graph_thinning.h"
#include "plots/hover_values.h"
#include "plots/legend_entry.h"
#include "plots/legend_wrap.h"
#include "plots/line_scale.h"

namespace oomlab::ui {
namespace {

QColor mix(const QColor& a, const QColor& b, double t) {
    return QColor::fromRgbF(a.redF() * (1 - t) + b.redF() * t,
                            a.greenF() * (1 - t) + b.greenF() * t,
                            a.blueF() * (1 - t) + b.blueF() * t);
}

void styleAxis(QCPAxis* axis, const QColor& text, const QColor& grid, const QColor& subGrid,
               const QFont& font) {
    const QPen pen(text, 1);
    axis->setBasePen(pen);
    axis->setTickPen(pen);
    axis->setSubTickPen(pen);
    axis->setTickLabelColor(text);
    axis->setLabelColor(text);
    axis->setTickLabelFont(font);
    axis->setLabelFont(font);
    axis->grid()->setPen(QPen(grid, 1, Qt::DotLine));
    axis->grid()->setSubGridPen(QPen(subGrid, 1, Qt::DotLine));
    axis->grid()->setZeroLinePen(Qt::NoPen);
}

}  // namespace

ThemedPlot::ThemedPlot(QWidget* parent)
    : QCustomPlot(parent), m_markers(this, [this] { requestReplot(); }) {
    m_replotTimer.setSingleShot(true);
    m_replotTimer.setInterval(kReplotIntervalMs);
    connect(&m_replotTimer, &QTimer::timeout, this, &ThemedPlot::replotNow);
    setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    setNoAntialiasingOnDrag(true);
    setPlottingHint(QCP::phFastPolylines, true);
    setAutoAddPlottableToLegend(false);  // addToLegend() adds entries that elide
    setMouseTracking(true);              // hover values
    // Each layout may change the minimum (a legend wrapped to a new width, wider ticks): the
    // parent layouts are told at once, or they keep the last one and squeeze the legend.
    connect(this, &QCustomPlot::afterLayout, this, [this] {
        placeItems();
        noteMinimumSize();
    });
    connect(this, &QCustomPlot::legendClick, this,
            [this](QCPLegend*, QCPAbstractLegendItem* item, QMouseEvent*) {
                if (auto* entry = qobject_cast<QCPPlottableLegendItem*>(item)) {
                    setSeriesVisible(entry->plottable(), !entry->plottable()->visible());
                }
            });
    applyPalette();
}

void ThemedPlot::placeLegendBelow(int maxColumns) {
    legend->setVisible(true);
    plotLayout()->addElement(plotLayout()->rowCount(), 0, legend);
    plotLayout()->setRowStretchFactor(plotLayout()->rowCount() - 1, 0.001);
    legend->setMargins(QMargins(4, 2, 4, 2));
    m_legendBelow = true;
    m_legendMaxColumns = std::max(1, maxColumns);
    legend->setWrap(m_legendMaxColumns);
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);
    applyPalette();
}

QSize ThemedPlot::minimumSizeHint() const {
    // QCustomPlot's layout knows the height: the axes' margins as last laid out, the data
    // area's minimum and the legend's rows as wrapped for the current width.
    return {QFontMetrics(QApplication::font()).height() * 14,
            QCustomPlot::minimumSizeHint().height()};
}

void ThemedPlot::updateMinimumSize() {
    const int line = QFontMetrics(QApplication::font()).height();
    axisRect()->setMinimumSize(line * 6, line * m_minimumDataLines);
    updateLayout();  // margins and legend rows for this font, so the hint is current now
    noteMinimumSize();
}

void ThemedPlot::noteMinimumSize() {
    const QSize minimum = QCustomPlot::minimumSizeHint();
    if (minimum != m_laidOutMinimum) {
        m_laidOutMinimum = minimum;
        updateGeometry();  // the parent layouts ask again
    }
}

void ThemedPlot::setMinimumDataLines(int lines) {
    m_minimumDataLines = std::max(1, lines);
    updateMinimumSize();
}

void ThemedPlot::wrapLegend() {
    if (m_legendBelow && wrapLegendToWidth(legend, m_legendMaxColumns, width())) {
        updateMinimumSize();  // the legend's height, and so the minimum height, changed
    }
}

void ThemedPlot::fitTickCounts() {
    const int line = QFontMetrics(QApplication::font()).height();
    for (QCPAxis* axis : axisRect()->axes()) {
        if (!axis->visible() || axis->ticker().dynamicCast<QCPAxisTickerText>()) {
            continue;  // named ticks (bars) are placed one per bar
        }
        // A label every two lines upwards; sideways, room for about five digits.
        const bool vertical = axis->orientation() == Qt::Vertical;
        const int length = vertical ? axisRect()->height() : axisRect()->width();
        const int spacing = vertical ? 2 * line : 4 * line;
        axis->ticker()->setTickCount(std::clamp(length / spacing, 2, 5));
    }
}

void ThemedPlot::resizeEvent(QResizeEvent* event) {
    fitTickCounts();
    fitAxisLabels();
    wrapLegend();
    QCustomPlot::resizeEvent(event);
}

void ThemedPlot::setSeriesVisible(QCPAbstractPlottable* series, bool visible) {
    series->setVisible(visible);
    if (QCPPlottableLegendItem* entry = legend->itemWithPlottable(series)) {
        QColor text = palette().color(QPalette::WindowText);
        if (!visible) {
            text.setAlphaF(0.4);
        }
        entry->setTextColor(text);
    }
    requestReplot();
}

QCPGraph* ThemedPlot::addLineSeries(const QString& name, const QColor& color, QCPAxis* valueAxis,
                                    Qt::PenStyle style) {
    QCPGraph* graph = addGraph(xAxis, valueAxis ? valueAxis : yAxis);
    graph->setName(name);
    // Width 1.0 is drawn as a cosmetic pen: many times faster than a wide pen on dense,
    // zig-zagging data. Dense series stay solid (dashes cost per pixel of path length).
    setSeriesPen(graph, QPen(color, 1.0, style));
    graph->setAdaptiveSampling(true);
    addToLegend(graph);
    return graph;
}

void ThemedPlot::addToLegend(QCPAbstractPlottable* series) {
    if (!legend->hasItemWithPlottable(series)) {
        legend->addItem(new LegendEntry(legend, series));
    }
}

void ThemedPlot::requestReplot() {
    if (!m_replotTimer.isActive()) {
        m_replotTimer.start();
    }
}

void ThemedPlot::setTitle(const QString& title) {
    if (title.isEmpty()) {
        if (m_title) {
            plotLayout()->remove(m_title);  // deletes it; no empty row stays above the axes
            plotLayout()->simplify();
            m_title = nullptr;
            updateMinimumSize();
        }
        return;
    }
    if (!m_title) {
        plotLayout()->insertRow(0);
        m_title = new QCPTextElement(this, title,
                                     QFont(font().family(), font().pointSize() + 2, QFont::Bold));
        m_title->setTextColor(foreground());
        plotLayout()->addElement(0, 0, m_title);
    }
    m_title->setText(title);
    updateMinimumSize();
}

void ThemedPlot::thinGraphs() {
    for (int i = 0; i < graphCount(); ++i) {
        thinGraph(graph(i));
    }
}

void ThemedPlot::renderNow() {
    thinGraphs();
    wrapLegend();
    fitRanges();
    replot(QCustomPlot::rpImmediateRefresh);
}

void ThemedPlot::replotNow() {
    thinGraphs();  // a long run's live series stay drawable
    if (m_follow) {
        fitRanges();
    }
    wrapLegend();  // series may have come or gone
    fitTickCounts();
    fitAxisLabels();
    ++m_replots;
    replot(QCustomPlot::rpQueuedReplot);
    noteMinimumSize();  // wider tick labels, a title: the layout's margins may have changed
}

void ThemedPlot::setFollowData(bool follow) {
    if (m_follow == follow) {
        return;
    }
    m_follow = follow;
    emit followDataChanged(follow);
    if (follow) {
        requestReplot();
    }
}

QColor ThemedPlot::foreground() const {
    return palette().color(QPalette::WindowText);
}

void ThemedPlot::applyPalette() {
    const QPalette pal = palette();
    const QColor base = pal.color(QPalette::Base);
    const QColor text = pal.color(QPalette::WindowText);
    const QColor grid = mix(base, text, 0.22);
    const QColor subGrid = mix(base, text, 0.1);
    setBackground(base);
    axisRect()->setBackground(base);
    const QFont font = QApplication::font();
    for (QCPAxis* axis : axisRect()->axes()) {
        styleAxis(axis, text, grid, subGrid, font);
    }
    legend->setBrush(m_legendBelow ? QBrush(Qt::NoBrush) : QBrush(mix(base, text, 0.04)));
    legend->setBorderPen(m_legendBelow ? QPen(Qt::NoPen) : QPen(mix(base, text, 0.3)));
    legend->setTextColor(text);
    legend->setFont(font);
    for (int i = 0; i < legend->itemCount(); ++i) {
        if (QCPAbstractLegendItem* item = legend->item(i)) {
            item->setFont(font);
        }
        if (auto* entry = qobject_cast<QCPPlottableLegendItem*>(legend->item(i))) {
            QColor color = text;
            color.setAlphaF(entry->plottable()->visible() ? 1.0 : 0.4);
            entry->setTextColor(color);
        }
    }
    rescaleSeriesPens(*this);  // presentation mode's lines, for the back of a room
    for (int i = 0; i < itemCount(); ++i) {
        if (auto* label = qobject_cast<QCPItemText*>(item(i))) {
            QFont labelFont = font;  // markers and the cap grow with the zoom, bold kept
            labelFont.setBold(label->font().bold());
            label->setFont(labelFont);
            if (label->property("themed").toBool()) {
                label->setColor(text);
            }
        }
    }
    wrapLegend();  // the entries' widths follow the font
    updateMinimumSize();
    requestReplot();
}

void ThemedPlot::fitAxis(QCPAxis* axis, const Bounds& bounds, bool fromZero) {
    if (!bounds.valid()) {
        return;
    }
    double low = fromZero ? std::min(0.0, bounds.low) : bounds.low;
    double high = bounds.high;
    if (high - low < 1e-12) {
        high = low + (low == 0 ? 1.0 : std::abs(low) * 0.1);
    }
    const double margin = (high - low) * 0.05;
    axis->setRange(fromZero && low == 0 ? 0 : low - margin, high + margin);
}

void ThemedPlot::changeEvent(QEvent* event) {
    QCustomPlot::changeEvent(event);
    // Fonts follow the application's, so the workbench's zoom (presentation mode) reaches the
    // axes, legends and titles of every plot.
    if (event->type() == QEvent::PaletteChange ||
        event->type() == QEvent::ApplicationPaletteChange || event->type() == QEvent::StyleChange ||
        event->type() == QEvent::ApplicationFontChange || event->type() == QEvent::FontChange) {
        applyPalette();
        requestReplot();
    }
}

void ThemedPlot::mouseMoveEvent(QMouseEvent* event) {
    if (event->buttons() & Qt::LeftButton) {  // dragging the range
        setFollowData(false);
    } else if (event->buttons() == Qt::NoButton) {
        const QString text = valuesAt(event->position());
        if (text.isEmpty()) {
            QToolTip::hideText();
        } else {
            QToolTip::showText(event->globalPosition().toPoint(), text, this);
        }
    }
    QCustomPlot::mouseMoveEvent(event);
}

QString ThemedPlot::valuesAt(const QPointF& pixel) const {
    return hoverValues(*this, pixel, kHoverPixels);
}

void ThemedPlot::wheelEvent(QWheelEvent* event) {
    setFollowData(false);
    QCustomPlot::wheelEvent(event);
}

void ThemedPlot::mouseDoubleClickEvent(QMouseEvent* event) {
    QCustomPlot::mouseDoubleClickEvent(event);
    setFollowData(true);
}

}  // namespace oomlab::ui
