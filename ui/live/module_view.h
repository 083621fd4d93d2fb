// Memory by module at a run's peak: the stacked bars and the same figures as a table
// (module, parameters, gradients, optimizer state, activations, total).
#pragma once

#include <QWidget>

#include <vector>

#include "oomlab/run/run_record.h"

class QLabel;
class QStackedLayout;
class QTableWidget;

namespace oomlab::ui {

class ModuleChart;

class ModuleView : public QWidget {
    Q_OBJECT

public:
    explicit ModuleView(QWidget* parent = nullptr);

    // Empty modules: shows why there is nothing (`reason`) instead of the figures.
    void setModules(const std::vector<ModuleMemory>& modules, const QString& reason = {});

    ModuleChart* chart() const { return m_chart; }
    QTableWidget* table() const { return m_table; }

private:
    QStackedLayout* m_pages = nullptr;
    QLabel* m_reason = nullptr;
    ModuleChart* m_chart = nullptr;
    QTableWidget* m_table = nullptr;
};

}  // namespace oomlab::ui
