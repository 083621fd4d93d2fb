#include "plots/breakdown_chart.h"

#include "plots/series_colors.h"

namespace oomlab::ui {
namespace {

QVector<BarLayer> breakdownLayers() {
    QVector<BarLayer> layers;
    for (std::size_t i = 0; i < kBreakdownKeys.size(); ++i) {
        layers.push_back({breakdownLabel(i), breakdownColor(i)});
    }
    return layers;
}

}  // namespace

BreakdownChart::BreakdownChart(Qt::Orientation orientation, QWidget* parent)
    : StackedBarChart(orientation, breakdownLayers(), parent) {}

void BreakdownChart::setBars(const QVector<BreakdownBar>& bars, std::int64_t capBytes) {
    QVector<StackedBar> stacked;
    for (const BreakdownBar& bar : bars) {
        StackedBar one{bar.label, {}};
        for (std::size_t i = 0; i < kBreakdownKeys.size(); ++i) {
            one.bytes.push_back(breakdown_field(bar.breakdown, i));
        }
        stacked.push_back(one);
    }
    setStackedBars(stacked, capBytes);
}

}  // namespace oomlab::ui
