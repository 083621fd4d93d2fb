#include "live/module_view.h"

#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QStackedLayout>
#include <QTableView>
#include <QVBoxLayout>

#include "common/formatting.h"
#include "common/table_sizing.h"
#include "live/module_table_model.h"
#include "live/prediction_model.h"
#include "plots/module_chart.h"

namespace oomlab::ui {

ModuleView::ModuleView(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("moduleView"));
    m_reason = new QLabel;
    m_reason->setWordWrap(true);
    m_reason->setAlignment(Qt::AlignCenter);
    m_chart = new ModuleChart;
    m_modules = new ModuleTableModel(this);
    m_table = new QTableView;
    m_table->setObjectName(QStringLiteral("moduleTable"));
    m_table->setModel(m_modules);
    m_table->verticalHeader()->hide();
    m_table->setWordWrap(false);
    // Columns follow their contents and the text size (presentation mode), never eliding a
    // figure or a heading; a wide table scrolls.
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    sizeRowsToText(m_table, 3);
    m_predictionSummary = new QLabel;
    m_predictionSummary->setWordWrap(true);
    m_prediction = new PredictionModel(this);
    m_predictionTable = new QTableView;
    m_predictionTable->setObjectName(QStringLiteral("predictionTable"));
    m_predictionTable->setModel(m_prediction);
    m_predictionTable->verticalHeader()->hide();
    m_predictionTable->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_predictionTable->horizontalHeader()->setStretchLastSection(true);
    m_predictionTable->setWordWrap(false);
    sizeRowsToText(m_predictionTable, 3);
    auto* against = new QWidget;
    auto* againstLayout = new QVBoxLayout(against);
    againstLayout->setContentsMargins(0, 0, 0, 0);
    againstLayout->addWidget(m_predictionSummary);
    againstLayout->addWidget(m_predictionTable, 1);
    m_predictionSummary->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    auto* tables = new QSplitter(Qt::Vertical);
    tables->addWidget(m_table);
    tables->addWidget(against);
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(m_chart);
    split->addWidget(tables);
    split->setSizes({2500, 1000});  // the bars and their legend (three columns) want the room
    // The figures, or in their place why there are none.
    m_pages = new QStackedLayout(this);
    m_pages->setContentsMargins(0, 0, 0, 0);
    m_pages->addWidget(split);
    m_pages->addWidget(m_reason);
    setModules({}, tr("Memory by module appears here when the run ends."));
    setPrediction(std::nullopt, RunOutcome{});
}

void ModuleView::setPrediction(const std::optional<MemoryPrediction>& prediction,
                               const RunOutcome& run) {
    if (!prediction) {
        m_prediction->clear();
        m_predictionSummary->setText(tr("No prediction was stored with this run."));
        return;
    }
    m_prediction->setCheck(check_prediction(*prediction, run));
    const PredictionCheck& check = m_prediction->check();
    const int off = check.disagreements();
    m_predictionSummary->setText(
        !check.not_comparable.empty() ? tr("<b>Against the prediction</b>: not held to it, as %1.")
                                            .arg(qs(check.not_comparable))
        : off == 0 ? tr("<b>Against the prediction</b>: every figure within 10% (or 64 KiB).")
                   : tr("<b>Against the prediction</b>: <span style='color:#d62728'>%1</span>, "
                        "marked below.")
                         .arg(plural(off, tr("%n figure off by more than 10%"),
                                     tr("%n figures off by more than 10%"))));
}

void ModuleView::setModules(const std::vector<ModuleMemory>& modules, const QString& reason) {
    m_reason->setText(reason);
    m_pages->setCurrentWidget(modules.empty() ? static_cast<QWidget*>(m_reason)
                                              : m_chart->parentWidget());
    m_chart->setModules(modules);
    m_modules->setModules(modules);
}

}  // namespace oomlab::ui
