// What each part of the model held at the run's peak, one lying bar per module in forward
// order, split into parameters, gradients, optimizer state and activations.
#pragma once

#include <vector>

#include "oomlab/run/run_record.h"
#include "plots/stacked_bar_chart.h"

namespace oomlab::ui {

class ModuleChart : public StackedBarChart {
    Q_OBJECT

public:
    // The layers, bottom first.
    enum Layer { Parameters, Gradients, OptimizerState, Activations, Temporaries };

    explicit ModuleChart(QWidget* parent = nullptr);

    // Modules that held nothing are left out. Activations not measured (CUDA) count 0.
    void setModules(const std::vector<ModuleMemory>& modules);
};

// The stages of a run as a staircase: each bar is the memory after the stage, split into
// what the stages before held and what this one added.
class StaircaseChart : public StackedBarChart {
    Q_OBJECT

public:
    enum Layer { Before, Added };

    explicit StaircaseChart(QWidget* parent = nullptr);

    void setStages(const std::vector<MemoryStage>& stages, std::int64_t capBytes = 0);
};

}  // namespace oomlab::ui
