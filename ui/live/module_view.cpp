#include "live/module_view.h"

#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QStackedLayout>
#include <QTableWidget>

#include "common/formatting.h"
#include "common/table_items.h"
#include "plots/module_chart.h"

namespace oomlab::ui {

ModuleView::ModuleView(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("moduleView"));
    m_reason = new QLabel;
    m_reason->setWordWrap(true);
    m_reason->setAlignment(Qt::AlignCenter);
    m_chart = new ModuleChart;
    m_table = new QTableWidget;
    m_table->setObjectName(QStringLiteral("moduleTable"));
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->verticalHeader()->hide();
    m_table->setColumnCount(6);
    m_table->setHorizontalHeaderLabels({tr("Module"), tr("Parameters"), tr("Gradients"),
                                        tr("Optimizer state"), tr("Activations"), tr("Total")});
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(m_chart);
    split->addWidget(m_table);
    split->setSizes({2000, 1000});  // the bars and their legend want the room
    // The figures, or in their place why there are none.
    m_pages = new QStackedLayout(this);
    m_pages->setContentsMargins(0, 0, 0, 0);
    m_pages->addWidget(split);
    m_pages->addWidget(m_reason);
    setModules({}, tr("Memory by module appears here when the run ends."));
}

void ModuleView::setModules(const std::vector<ModuleMemory>& modules, const QString& reason) {
    m_reason->setText(reason);
    m_pages->setCurrentWidget(modules.empty() ? static_cast<QWidget*>(m_reason)
                                              : m_chart->parentWidget());
    m_chart->setModules(modules);
    m_table->setRowCount(0);
    std::int64_t sum[5] = {};
    bool activationsMeasured = true;
    const auto addRow = [this](const QString& name, const std::int64_t(&bytes)[5],
                               bool activations) {
        const int row = m_table->rowCount();
        m_table->insertRow(row);
        m_table->setItem(row, 0, new QTableWidgetItem(name));
        for (int column = 1; column <= 5; ++column) {
            m_table->setItem(row, column, figureItem(formatBytes(bytes[column - 1])));
        }
        if (!activations) {
            auto* item = new QTableWidgetItem(tr("not measured"));
            item->setToolTip(
                tr("The CUDA caching allocator does not tell which module a block is for."));
            m_table->setItem(row, 4, item);
        }
    };
    for (const ModuleMemory& module : modules) {
        if (module.parameters + module.gradients + module.optimizer_state +
                module.activations.value_or(0) ==
            0) {
            continue;  // as in the chart
        }
        const std::int64_t activations = module.activations.value_or(0);
        const std::int64_t bytes[5] = {
            module.parameters, module.gradients, module.optimizer_state, activations,
            module.parameters + module.gradients + module.optimizer_state + activations};
        for (int i = 0; i < 5; ++i) {
            sum[i] += bytes[i];
        }
        activationsMeasured = activationsMeasured && module.activations.has_value();
        addRow(qs(module.module), bytes, module.activations.has_value());
    }
    if (!modules.empty()) {
        addRow(tr("all modules"), sum, activationsMeasured);
        QFont bold = m_table->font();
        bold.setBold(true);
        for (int column = 0; column < m_table->columnCount(); ++column) {
            m_table->item(m_table->rowCount() - 1, column)->setFont(bold);
        }
    }
    m_table->resizeColumnsToContents();
}

}  // namespace oomlab::ui
