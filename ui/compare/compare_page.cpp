#include "compare/compare_page.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "common/app_settings.h"
#include "common/fitted_columns.h"
#include "common/formatting.h"
#include "common/tab_sizing.h"
#include "common/table_sizing.h"
#include "common/wrapped_label.h"
#include "compare/compare_metrics_model.h"
#include "compare/compare_plots.h"
#include "compare/memory_diff_view.h"
#include "compare/settings_diff.h"
#include "plots/breakdown_chart.h"
#include "plots/series_colors.h"
#include "plots/smoothing_box.h"

namespace oomlab::ui {

ComparePage::ComparePage(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("comparePage"));
    m_title = new WrappedLabel(tr("Select two or more runs in the Runs tab and press Compare."));
    m_xAxis = new QComboBox;
    m_xAxis->setObjectName(QStringLiteral("compareXAxis"));
    m_xAxis->addItems({tr("x: optimizer step"), tr("x: wall time")});
    m_memoryQuantity = new QComboBox;
    m_memoryQuantity->addItems(
        {tr("memory: step peak"), tr("memory: allocated"), tr("memory: reserved")});
    m_differencesOnly = new QCheckBox(tr("Show differences only"));
    m_differencesOnly->setObjectName(QStringLiteral("differencesOnly"));
    m_differencesOnly->setChecked(true);
    m_showOther = new QCheckBox(tr("Include \"other\" memory"));
    m_showOther->setToolTip(
        tr("Memory outside the allocator: on CUDA the context and other "
           "processes, on the CPU the whole process (libraries included)."));
    m_showPredicted = new QCheckBox(tr("Predictions"));
    m_showPredicted->setToolTip(
        tr("A second bar for each run: what the estimator predicted for it when it started "
           "(one process of a run of several)."));
    m_smoothing = createSmoothingBox();
    // The title has a row of its own: beside the controls, a narrow screen wrapped it onto
    // eight lines.
    auto* bar = new QHBoxLayout;
    bar->addStretch(1);
    bar->addWidget(m_smoothing);
    bar->addWidget(m_xAxis);
    bar->addWidget(m_memoryQuantity);

    m_loss = new ComparePlot(ComparePlot::Quantity::Loss);
    m_loss->setObjectName(QStringLiteral("compareLossPlot"));
    m_loss->setSmoothing(m_smoothing->value());
    connect(m_smoothing, qOverload<double>(&QDoubleSpinBox::valueChanged), m_loss,
            &ComparePlot::setSmoothing);
    m_memory = new ComparePlot(ComparePlot::Quantity::PeakMemory);
    m_memory->setObjectName(QStringLiteral("compareMemoryPlot"));
    m_settings = new SettingsDiffTable;
    m_breakdown = new BreakdownChart(Qt::Vertical);
    m_breakdown->setObjectName(QStringLiteral("compareBreakdown"));
    m_metricsModel = new CompareMetricsModel(this);
    m_metrics = new QTableView;
    m_metrics->setModel(m_metricsModel);
    m_metrics->setObjectName(QStringLiteral("compareMetrics"));
    m_metrics->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_metrics->verticalHeader()->hide();
    sizeRowsToText(m_metrics, 3);
    // Read whole at any text size: a room keeps the run, its status, its peak and its loss
    // ("Batcl", "inal los" and "1…" were shown at 1024x768 presenting).
    m_metricsColumns = new FittedColumns(
        m_metrics,
        {CompareMetricsModel::Throughput, CompareMetricsModel::Duration, CompareMetricsModel::Steps,
         CompareMetricsModel::ValAccuracy, CompareMetricsModel::Batch},
        CompareMetricsModel::Run);
    connect(m_metrics->horizontalHeader(), &QHeaderView::sectionResized, this,
            [this](int column, int, int width) {
                if (!m_metricsColumns->fitting()) {
                    m_metricsColumns->userSized(column, width);
                }
            });

    auto* plots = new QSplitter(Qt::Horizontal);
    plots->addWidget(m_loss);
    plots->addWidget(m_memory);
    auto* settingsBox = new QWidget;
    auto* settingsLayout = new QVBoxLayout(settingsBox);
    settingsLayout->setContentsMargins(0, 0, 0, 0);
    settingsLayout->addWidget(m_metrics, 1);
    settingsLayout->addWidget(m_differencesOnly);
    settingsLayout->addWidget(m_settings, 1);
    m_lower = new QSplitter(Qt::Horizontal);
    QSplitter* lower = m_lower;
    auto* breakdownBox = new QWidget;
    auto* breakdownLayout = new QVBoxLayout(breakdownBox);
    breakdownLayout->setContentsMargins(0, 0, 0, 0);
    breakdownLayout->addWidget(m_breakdown, 1);
    auto* breakdownOptions = new QHBoxLayout;
    breakdownOptions->addWidget(m_showOther);
    breakdownOptions->addWidget(m_showPredicted);
    breakdownOptions->addStretch(1);
    breakdownLayout->addLayout(breakdownOptions);
    // The results and settings, or what differs at the peak: both are tables that want
    // the wider column, and the breakdown beside them stays in view.
    m_diff = new MemoryDiffView;
    auto* tableTabs = new QTabWidget;
    tableTabs->setObjectName(QStringLiteral("compareTableTabs"));
    tableTabs->setDocumentMode(true);
    tableTabs->addTab(settingsBox, tr("Results"));
    tableTabs->addTab(m_diff, tr("Difference at the peak"));
    sizeTabsToCurrentPage(tableTabs);
    lower->addWidget(tableTabs);
    lower->addWidget(breakdownBox);
    // Half each: the breakdown's legend keeps two columns on a projector (with less it fell
    // to one column of eight rows).
    lower->setStretchFactor(0, 1);
    lower->setStretchFactor(1, 1);
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(plots);
    split->addWidget(lower);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setSizes({3000, 2000});
    lower->setSizes({1000, 1000});

    m_note = new WrappedLabel;
    m_note->setObjectName(QStringLiteral("compareNote"));
    m_note->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_note->hide();
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_title);
    layout->addLayout(bar);
    layout->addWidget(m_note);
    layout->addWidget(split, 1);

    connect(m_xAxis, qOverload<int>(&QComboBox::currentIndexChanged), this, [this](int index) {
        const auto axis = index == 1 ? ComparePlot::XAxis::Time : ComparePlot::XAxis::Step;
        m_loss->setXAxis(axis);
        m_memory->setXAxis(axis);
        AppSettings::setValue(QStringLiteral("compare/xAxis"), index);
    });
    connect(m_memoryQuantity, qOverload<int>(&QComboBox::currentIndexChanged), this,
            [this](int index) {
                static const ComparePlot::Quantity quantities[] = {
                    ComparePlot::Quantity::PeakMemory, ComparePlot::Quantity::AllocatedMemory,
                    ComparePlot::Quantity::ReservedMemory};
                m_memory->setQuantity(quantities[qBound(0, index, 2)]);
            });
    connect(m_showOther, &QCheckBox::toggled, this, &ComparePage::fillBreakdown);
    connect(m_showPredicted, &QCheckBox::toggled, this, &ComparePage::fillBreakdown);
    connect(m_differencesOnly, &QCheckBox::toggled, m_settings,
            &SettingsDiffTable::setDifferencesOnly);
    connect(&m_watcher, &QFutureWatcher<CompareData>::finished, this,
            [this] { show(m_watcher.result()); });
    m_xAxis->setCurrentIndex(AppSettings::value(QStringLiteral("compare/xAxis"), 0).toInt());
}

ComparePage::~ComparePage() {
    m_watcher.waitForFinished();
}

void ComparePage::setTimeAxis(bool byTime) {
    m_xAxis->setCurrentIndex(byTime ? 1 : 0);
}

void ComparePage::setNote(const QString& html, const QVector<qint64>& runIds) {
    m_noteHtml = html;
    m_noteRuns = runIds;
    updateNote();
}

void ComparePage::updateNote() {
    const bool about = !m_noteHtml.isEmpty() && m_noteRuns == m_shownRuns;
    m_note->setText(about ? m_noteHtml : QString());
    m_note->setVisible(about);
}

QString ComparePage::note() const {
    return m_note->text();
}

void ComparePage::showRuns(const QString& databasePath, const QVector<qint64>& runIds) {
    m_shownRuns = runIds;
    updateNote();
    m_watcher.waitForFinished();
    m_title->setText(plural(runIds.size(), tr("Loading %n run…"), tr("Loading %n runs…")));
    m_watcher.setFuture(QtConcurrent::run(loadCompareData, databasePath, runIds));
}

void ComparePage::show(const CompareData& loaded) {
    m_loaded = loaded.runs;
    m_runs = loaded.runs;
    m_title->setToolTip({});
    // What every name shares is said once, in the title: the legends, bars and tables show
    // what tells the runs apart ("none", "optimizer" for a lesson's runs).
    const QString shared = sharedNamePrefix(m_runs);
    for (CompareRun& run : m_runs) {
        run.record.name.erase(0, ss(shared).size());
    }
    if (!loaded.error.isEmpty()) {
        m_title->setText(loaded.error.toHtmlEscaped());
    } else if (m_runs.size() < 2) {
        m_title->setText(plural(m_runs.size(), tr("Comparing %n run"), tr("Comparing %n runs")) +
                         tr("; select two or more in the Runs tab for a comparison."));
    } else {
        // One line on a projector too: each run's colour and id; the legends, the tables and
        // the tooltip name them (four lesson runs' names took six lines).
        QStringList ids;
        QStringList fullNames;
        for (int i = 0; i < m_runs.size(); ++i) {
            ids << QStringLiteral("<span style='color:%1'>■</span> #%2")
                       .arg(seriesColor(i).name())
                       .arg(m_runs[i].record.id);
            fullNames << QStringLiteral("#%1 %2%3")
                             .arg(m_runs[i].record.id)
                             .arg(shared, qs(m_runs[i].record.name));
        }
        m_title->setText(tr("<b>Comparing</b> %1%2")
                             .arg(shared.toHtmlEscaped(), ids.join(QStringLiteral(" &nbsp; "))));
        m_title->setToolTip(fullNames.join(QLatin1Char('\n')));
    }
    QStringList ids;
    for (const CompareRun& run : m_runs) {
        ids << QStringLiteral("#%1").arg(run.record.id);
    }
    const QString runs = tr("Runs %1").arg(ids.join(QStringLiteral(", ")));
    m_loss->setExportTitle(tr("%1: loss").arg(runs));
    m_memory->setExportTitle(tr("%1: peak memory of each step").arg(runs));
    m_breakdown->setExportTitle(tr("%1: memory at the peak").arg(runs));
    m_loss->setRuns(m_runs);
    m_memory->setRuns(m_runs);
    m_settings->setRuns(m_runs);
    m_diff->setRuns(m_runs);
    fillBreakdown();
    fillMetrics();
    emit this->loaded();
}

void ComparePage::setShowOther(bool show) {
    m_showOther->setChecked(show);
}

void ComparePage::setShowPredicted(bool show) {
    m_showPredicted->setChecked(show);
}

void ComparePage::fillBreakdown() {
    QVector<BreakdownBar> bars;
    std::int64_t cap = 0;
    bool sameCap = true;
    for (int i = 0; i < m_runs.size(); ++i) {
        const CompareRun& run = m_runs[i];
        MemoryBreakdown breakdown = run.record.outcome.breakdown;
        if (!m_showOther->isChecked()) {
            breakdown.other = 0;
        }
        // The run's name under its bar, on the lines a bar's width gives it, or its id.
        bars.push_back({runLabel(run.record, 0), breakdown});
        if (m_showPredicted->isChecked() && run.record.prediction) {
            MemoryBreakdown predicted = run.record.prediction->breakdown;
            predicted.other = m_showOther->isChecked() ? predicted.other : 0;
            bars.push_back({tr("#%1 predicted").arg(run.record.id), predicted});
        }
        const std::int64_t runCap = run.config.memory.cap_bytes();
        sameCap = sameCap && (i == 0 || runCap == cap);
        cap = runCap;
    }
    m_breakdown->setBars(bars, sameCap ? cap : 0);
}

void ComparePage::fillMetrics() {
    m_metricsModel->setRuns(m_runs);
    m_metricsColumns->fit();
}

void ComparePage::setPresenting(bool on) {
    // Presenting, the tables get the page's width, the breakdown under them (the page
    // scrolls): at half of a 1024 px screen the run, its status, loss and peak did not fit.
    m_lower->setOrientation(on ? Qt::Vertical : Qt::Horizontal);
    m_lower->setSizes({1000, 1000});
    m_metricsColumns->setLeavingOut(on);
}

void ComparePage::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::FontChange) {
        m_metricsColumns->fitSoon();  // widths of the old text size clipped the headings
    }
}

}  // namespace oomlab::ui
