// Memory by category as stacked bars: one bar for the predicted breakdown against the cap,
// or one bar per run side by side in the compare view.
#pragma once

#include "oomlab/run/breakdown.h"
#include "plots/stacked_bar_chart.h"

namespace oomlab::ui {

struct BreakdownBar {
    QString label;
    MemoryBreakdown breakdown;
};

class BreakdownChart : public StackedBarChart {
    Q_OBJECT

public:
    explicit BreakdownChart(Qt::Orientation orientation, QWidget* parent = nullptr);

    // Replaces the bars; `capBytes` > 0 draws the memory cap as a line.
    void setBars(const QVector<BreakdownBar>& bars, std::int64_t capBytes = 0);
};

}  // namespace oomlab::ui
