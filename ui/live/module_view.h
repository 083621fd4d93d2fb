// Memory by module at a run's peak: the stacked bars and the same figures as a table
// (module, parameters, gradients, optimizer state, activations, total), and beside them the
// estimator's prediction against the measured figures, by category and by module.
#pragma once

#include <QWidget>

#include <optional>
#include <vector>

#include "oomlab/run/run_record.h"

class QLabel;
class QStackedLayout;
class QTableView;

namespace oomlab::ui {

class ModuleChart;
class ModuleTableModel;
class PredictionModel;

class ModuleView : public QWidget {
    Q_OBJECT

public:
    explicit ModuleView(QWidget* parent = nullptr);

    // Empty modules: shows why there is nothing (`reason`) instead of the figures.
    void setModules(const std::vector<ModuleMemory>& modules, const QString& reason = {});
    // The run's figures against what the estimator predicted when it started; none for runs
    // of older versions.
    void setPrediction(const std::optional<MemoryPrediction>& prediction, const RunOutcome& run);

    ModuleChart* chart() const { return m_chart; }
    ModuleTableModel* modules() const { return m_modules; }
    PredictionModel* prediction() const { return m_prediction; }
    QLabel* predictionSummary() const { return m_predictionSummary; }

private:
    QStackedLayout* m_pages = nullptr;
    QLabel* m_reason = nullptr;
    ModuleChart* m_chart = nullptr;
    ModuleTableModel* m_modules = nullptr;
    QTableView* m_table = nullptr;
    QLabel* m_predictionSummary = nullptr;
    PredictionModel* m_prediction = nullptr;
    QTableView* m_predictionTable = nullptr;
};

}  // namespace oomlab::ui
