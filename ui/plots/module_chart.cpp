#include "plots/module_chart.h"

#include <algorithm>

#include "common/formatting.h"
#include "plots/series_colors.h"

namespace oomlab::ui {
namespace {

// The breakdown's colours for the same kinds of memory, so both charts read alike.
QColor categoryColor(std::string_view key) {
    const auto found = std::find(kBreakdownKeys.begin(), kBreakdownKeys.end(), key);
    return breakdownColor(static_cast<std::size_t>(found - kBreakdownKeys.begin()));
}

}  // namespace

ModuleChart::ModuleChart(QWidget* parent)
    : StackedBarChart(Qt::Horizontal,
                      {{tr("parameters"), categoryColor("parameters")},
                       {tr("gradients"), categoryColor("gradients")},
                       {tr("optimizer state"), categoryColor("optimizer_state")},
                       {tr("activations"), categoryColor("activations")},
                       // The breakdown sums both as "activations and temporaries".
                       {tr("temporaries"), categoryColor("activations").lighter(150)}},
                      parent) {
    setObjectName(QStringLiteral("moduleChart"));
    // Five kinds take two legend rows on a small screen; the bars give up a line for them.
    setMinimumDataLines(2);
}

void ModuleChart::setModules(const std::vector<ModuleMemory>& modules) {
    QVector<StackedBar> bars;
    for (const ModuleMemory& module : modules) {
        const StackedBar bar{qs(module.module),
                             {module.parameters, module.gradients, module.optimizer_state,
                              module.layer_activations(), module.temporaries()}};
        if (bar.total() > 0) {
            bars.push_back(bar);
        }
    }
    setStackedBars(bars);
}

StaircaseChart::StaircaseChart(QWidget* parent)
    : StackedBarChart(Qt::Vertical,
                      {{tr("held by the stages before"), QColor(0x9e, 0x9e, 0x9e)},
                       {tr("added by this stage"), categoryColor("activations")}},
                      parent) {
    setObjectName(QStringLiteral("staircaseChart"));
}

void StaircaseChart::setStages(const std::vector<MemoryStage>& stages, std::int64_t capBytes) {
    QVector<StackedBar> bars;
    std::int64_t before = 0;
    for (const MemoryStage& stage : stages) {
        const std::int64_t now = stage.allocated_bytes;
        // A stage that releases memory (steady state below the first peak) adds nothing.
        bars.push_back(
            {qs(stage.stage), {std::min(before, now), std::max<std::int64_t>(now - before, 0)}});
        before = now;
    }
    setStackedBars(bars, capBytes);
}

}  // namespace oomlab::ui
