// Stacked bars of bytes: one bar per thing measured (a run, a module, a stage), each split
// into layers (categories of memory, kinds of memory). The memory charts of every view.
#pragma once

#include <QColor>
#include <QString>
#include <QVector>

#include <cstdint>

#include "plots/themed_plot.h"

namespace oomlab::ui {

struct BarLayer {
    QString name;
    QColor color;
};

struct StackedBar {
    QString label;
    QVector<std::int64_t> bytes;  // one entry per layer, bottom first
    std::int64_t total() const;
};

class StackedBarChart : public ThemedPlot {
    Q_OBJECT

public:
    // Horizontal: bars lie along x, the first at the top; vertical: bars stand side by side.
    StackedBarChart(Qt::Orientation orientation, const QVector<BarLayer>& layers,
                    QWidget* parent = nullptr);

    // Replaces the bars; `capBytes` > 0 draws the memory cap as a line.
    void setStackedBars(const QVector<StackedBar>& bars, std::int64_t capBytes = 0);
    int barCount() const { return m_bars.size(); }
    // MiB stacked for layer `layer` of bar `bar` (tests, tooltips).
    double valueMiB(int bar, std::size_t layer) const;
    // The bar under the cursor: its total and every layer, the one pointed at in bold.
    QString valuesAt(const QPointF& pixel) const override;

protected:
    // Standing bars: each name elided to the space between bars (the hover shows it whole).
    void fitAxisLabels() override;

private:
    static constexpr double kBarWidth = 0.6;  // in keys (bars are 1 apart)

    QCPAxis* keyAxis() const;
    QCPAxis* valueAxis() const;
    // The legend names `layers` alone (those the bars hold), in the layers' order.
    void listLayers(const QVector<QCPBars*>& layers);

    Qt::Orientation m_orientation;
    QVector<BarLayer> m_layerInfo;
    QVector<QCPBars*> m_layers;
    QCPItemStraightLine* m_capLine = nullptr;
    QCPItemText* m_capLabel = nullptr;
    QVector<StackedBar> m_bars;
};

}  // namespace oomlab::ui
