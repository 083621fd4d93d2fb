// Memory by category as stacked bars: one bar for the predicted breakdown against the cap,
// or one bar per run side by side in the compare view.
#pragma once

#include <QString>
#include <QVector>

#include <cstdint>

#include "oomlab/run/breakdown.h"
#include "plots/themed_plot.h"

namespace oomlab::ui {

struct BreakdownBar {
    QString label;
    MemoryBreakdown breakdown;
};

class BreakdownChart : public ThemedPlot {
    Q_OBJECT

public:
    // Horizontal: bars lie along x (compact, for one bar); vertical: bars stand side by side.
    explicit BreakdownChart(Qt::Orientation orientation, QWidget* parent = nullptr);

    // Replaces the bars; `capBytes` > 0 draws the memory cap as a line.
    void setBars(const QVector<BreakdownBar>& bars, std::int64_t capBytes = 0);
    int barCount() const { return m_barCount; }
    // MiB stacked for category `category` of bar `bar` (tests, tooltips).
    double valueMiB(int bar, std::size_t category) const;
    // The bar under the cursor: its total and every category, the one pointed at in bold.
    QString valuesAt(const QPointF& pixel) const override;

protected:
    // Standing bars: each name elided to the space between bars (the hover shows it whole).
    void fitAxisLabels() override;

private:
    static constexpr double kBarWidth = 0.6;  // in keys (bars are 1 apart)

    QCPAxis* keyAxis() const;
    QCPAxis* valueAxis() const;

    Qt::Orientation m_orientation;
    QVector<QCPBars*> m_categories;
    QCPItemStraightLine* m_capLine = nullptr;
    QCPItemText* m_capLabel = nullptr;
    int m_barCount = 0;
    QVector<BreakdownBar> m_bars;
};

}  // namespace oomlab::ui
