// The real window on the real engine: press Run with a tiny CPU config, wait for the end,
// and check that the run reached the runs table, the plots and the database; run out of
// memory on purpose; stop with Esc; compare two runs; export a plot and the metrics.
#include <QApplication>
#include <QFile>
#include <QImage>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>

#include "common/app_settings.h"
#include "common/formatting.h"
#include "common/run_types.h"
#include "compare/compare_page.h"
#include "compare/compare_plots.h"
#include "compare/memory_diff_model.h"
#include "compare/memory_diff_view.h"
#include "compare/settings_diff.h"
#include "experiment/config_form.h"
#include "experiment/experiment_panel.h"
#include "export/run_export.h"
#include "live/failure_panel.h"
#include "live/live_page.h"
#include "live/loss_plot.h"
#include "live/memory_plot.h"
#include "live/module_table_model.h"
#include "live/module_view.h"
#include "live/phase_plot.h"
#include "live/prediction_model.h"
#include "live/run_controller.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/run/memory_diff.h"
#include "plots/breakdown_chart.h"
#include "plots/module_chart.h"
#include "plots/plot_export.h"
#include "runs/run_database.h"
#include "runs/runs_model.h"
#include "runs/runs_page.h"
#include "ui_test_support.h"
#include "window/main_menus.h"
#include "window/main_window.h"
#include "window/status_progress.h"

using namespace oomlab;
using namespace oomlab::ui;

namespace {

int countRows(const std::vector<MetricRow>& rows, const char* phase, bool needLoss) {
    int count = 0;
    for (const MetricRow& row : rows) {
        count += row.phase == phase && (!needLoss || row.loss) ? 1 : 0;
    }
    return count;
}

}  // namespace

class MainWindowTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::unique_ptr<MainWindow> m_window;
    QVector<qint64> m_completed;

    RunEnd runAndWait() { return test::runAndWait(*m_window); }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        m_window = test::shownWindow(m_dir.filePath("runs.sqlite"));
        QVERIFY(m_window);
        QCOMPARE(m_window->runsPage()->model()->rowCount(), 0);
    }

    void runReachesTablePlotsAndDatabase() {
        const RunEnd end = runAndWait();
        QCOMPARE(statusName(end.status()), QStringLiteral("completed"));
        QVERIFY(end.runId > 0);
        QCOMPARE(end.outcome.steps, std::int64_t(12));
        m_completed.push_back(end.runId);

        // The runs table has the new row, completed.
        RunsModel* model = m_window->runsPage()->model();
        QTRY_COMPARE(model->rowCount(), 1);
        const int row = model->rowOfRun(end.runId);
        QVERIFY(row >= 0);
        QCOMPARE(model->index(row, RunsModel::Status).data().toString(),
                 QStringLiteral("completed"));
        QCOMPARE(model->index(row, RunsModel::Steps).data().toLongLong(), 12LL);

        // The database holds the metrics; the plots hold exactly its points.
        const RunStore store = RunStore::open(m_dir.filePath("runs.sqlite").toStdString());
        const std::vector<MetricRow> metrics = store.metrics(end.runId);
        QCOMPARE(countRows(metrics, "step", false), 12);
        QCOMPARE(countRows(metrics, "eval", true), 2);  // eval.every=6
        LivePage* live = m_window->livePage();
        QCOMPARE(live->currentRunId(), end.runId);
        QCOMPARE(live->lossPlot()->trainLoss()->dataCount(), countRows(metrics, "step", true));
        QCOMPARE(live->lossPlot()->validationLoss()->dataCount(), 2);
        QCOMPARE(live->lossPlot()->validationAccuracy()->dataCount(), 2);
        QCOMPARE(live->memoryPlot()->allocated()->dataCount(), 12);
        QCOMPARE(live->memoryPlot()->peak()->dataCount(), 12);
        // The last plotted point is the database's last step row.
        const MetricRow& last = *std::find_if(metrics.rbegin(), metrics.rend(),
                                              [](const MetricRow& r) { return r.phase == "step"; });
        const auto lastPoint = live->memoryPlot()->peak()->data()->constEnd() - 1;
        QCOMPARE(lastPoint->key, 12.0);
        QCOMPARE(lastPoint->value, double(*last.peak_bytes) / (1 << 20));
        // Every phase sample (12 steps are all sampled in detail) and the step ends.
        QCOMPARE(live->phasePlot()->phase(QStringLiteral("forward"))->dataCount(),
                 countRows(metrics, "forward", false));
        QVERIFY(live->phasePlot()->phase(QStringLiteral("forward"))->dataCount() >= 12);
        QVERIFY(live->lossPlot()->coalescedReplots() >= 1);
        // Memory by module at the peak: a bar and a row per module that held bytes, then the
        // total row; the table's figures are the run's.
        const std::vector<ModuleMemory>& modules = end.outcome.by_module;
        QVERIFY(!modules.empty());
        const ModuleTableModel* table = live->moduleView()->modules();
        const auto cell = [](const QAbstractItemModel* tableModel, int at, int column) {
            return tableModel->index(at, column).data().toString();
        };
        QCOMPARE(table->rowCount(), live->moduleView()->chart()->barCount() + 1);
        // Beside them, the run against the prediction stored with it: the peak first.
        const PredictionModel* predicted = live->moduleView()->prediction();
        QVERIFY(end.prediction.has_value());
        QVERIFY(predicted->rowCount() > int(modules.size()));
        QCOMPARE(predicted->index(0, PredictionModel::Predicted).data().toString(),
                 formatBytes(end.prediction->peak_bytes));
        QCOMPARE(predicted->index(0, PredictionModel::Measured).data().toString(),
                 formatBytes(end.outcome.peak_bytes));
        QVERIFY(live->moduleView()->predictionSummary()->text().contains(
            QStringLiteral("Against the prediction")));
        QCOMPARE(cell(table, 0, ModuleTableModel::Module), qs(modules.front().module));
        QCOMPARE(cell(table, 0, ModuleTableModel::Parameters),
                 formatBytes(modules.front().parameters));
        QCOMPARE(live->moduleView()->chart()->valueMiB(0, ModuleChart::Parameters),
                 toMiB(modules.front().parameters));
        std::int64_t parameters = 0;
        for (const ModuleMemory& module : modules) {
            parameters += module.parameters;
        }
        QCOMPARE(cell(table, table->rowCount() - 1, ModuleTableModel::Parameters),
                 formatBytes(parameters));
        // The staircase: a bar per stage, each as high as the memory after it.
        StaircaseChart* staircase = live->staircaseChart();
        QCOMPARE(staircase->barCount(), int(end.outcome.staircase.size()));
        QVERIFY(staircase->barCount() >= 4);  // empty, weights, optimizer state, peaks
        const int lastStage = staircase->barCount() - 1;
        QCOMPARE(staircase->valueMiB(lastStage, StaircaseChart::Before) +
                     staircase->valueMiB(lastStage, StaircaseChart::Added),
                 toMiB(end.outcome.staircase.back().allocated_bytes));
        // Nothing went wrong, so no explanation panel; progress done.
        QVERIFY(live->failurePanel()->isHidden());
        QVERIFY(m_window->statusProgress()->bar()->isHidden());
        QVERIFY(m_window->experimentPanel()->runButton()->isEnabled());
    }

    void outOfMemoryIsExplainedInTheWindow() {
        ConfigForm* form = m_window->experimentPanel()->form();
        QVERIFY(form->setValue(QStringLiteral("memory.cap_mb"), QStringLiteral("4")));
        const RunEnd end = runAndWait();
        QVERIFY(form->setValue(QStringLiteral("memory.cap_mb"), QStringLiteral("0")));
        QCOMPARE(statusName(end.status()), QStringLiteral("oom"));
        QVERIFY(end.runId > 0);
        FailurePanel* panel = m_window->livePage()->failurePanel();
        QVERIFY(!panel->isHidden());
        QVERIFY(panel->headline().contains(QStringLiteral("Out of memory")));
        // The cap is stated once, as the user set it.
        QVERIFY2(panel->details().contains(QStringLiteral("of its 4.0 MiB cap (memory.cap_mb)")),
                 qPrintable(panel->details()));
        QCOMPARE(panel->details().count(QStringLiteral("MiB cap")), 1);
        QVERIFY(panel->suggestionCount() >= 2);
        QVERIFY(m_window->livePage()->memoryPlot()->capVisible());
        QCOMPARE(m_window->livePage()->memoryPlot()->capMiB(), 4.0);
        QVERIFY(m_window->livePage()->memoryPlot()->markers().markerCount() >= 1);
        // The database survived with the run's status and error.
        const RunStore store = RunStore::open(m_dir.filePath("runs.sqlite").toStdString());
        const auto run = store.find_run(end.runId);
        QVERIFY(run.has_value());
        QCOMPARE(run->outcome.status, RunStatus::Oom);
        QVERIFY(!run->outcome.error.empty());
        // The window still works: one click applies the engine's first fix, every key of it.
        QVERIFY(!end.fixes.empty());
        auto* apply = panel->findChild<QPushButton*>();
        QVERIFY(apply);
        QCOMPARE(apply->text(), QStringLiteral("Apply"));
        QTest::mouseClick(apply, Qt::LeftButton);
        QStringList applied;
        for (const auto& [key, value] : end.fixes.front().set) {
            QCOMPARE(get_config_value(form->config(), key), value);
            applied << qs(key + "=" + value);
        }
        // The run that tries it is named after the fix and linked to the run it fixes; the
        // failed run keeps its fixes and shows what the fix measured against its prediction.
        const RunEnd fixed = runAndWait();
        const auto tried =
            RunStore::open(m_dir.filePath("runs.sqlite").toStdString()).find_run(fixed.runId);
        QVERIFY(tried);
        QCOMPARE(qs(tried->name), qs(run->name) + " + " + applied.join(QStringLiteral(", ")));
        QCOMPARE(tried->fix_of, std::optional<std::int64_t>(end.runId));
        QVERIFY(!run->fixes_json.empty());
        // Its ending on the live page says what the fix measured against its prediction.
        const QString header = m_window->livePage()->header();
        QVERIFY2(header.contains(
                     QStringLiteral("Tries a fix offered to run %1: predicted ").arg(end.runId)) &&
                     header.contains(QStringLiteral(" → measured ")),
                 qPrintable(header));
        m_window->runsPage()->selectRuns({end.runId});
        const QString details = m_window->runsPage()->detailsText();
        QVERIFY2(details.contains(QStringLiteral("Fixes offered")), qPrintable(details));
        QVERIFY2(details.contains(QStringLiteral("Tried in run %1").arg(fixed.runId)),
                 qPrintable(details));
        QVERIFY2(details.contains(QStringLiteral("predicted ")), qPrintable(details));
        // A run started afterwards is its own again.
        const RunEnd plain = runAndWait();
        QVERIFY(!RunStore::open(m_dir.filePath("runs.sqlite").toStdString())
                     .find_run(plain.runId)
                     ->fix_of);
        m_window->experimentPanel()->setConfig(test::tinyConfig(12));
    }

    void escapeStopsARun() {
        m_window->experimentPanel()->setConfig(test::tinyConfig(100000));
        QSignalSpy created(m_window->controller(), &RunController::runCreated);
        QSignalSpy finished(m_window->controller(), &RunController::runFinished);
        QVERIFY(m_window->startRun());
        QTRY_COMPARE_WITH_TIMEOUT(created.count(), 1, 30000);
        QVERIFY(m_window->menus()->stopAction()->isEnabled());
        m_window->activateWindow();
        QTest::keyClick(m_window.get(), Qt::Key_Escape);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
        const RunEnd end = finished.at(0).at(0).value<RunEnd>();
        QCOMPARE(statusName(end.status()), QStringLiteral("cancelled"));
        QVERIFY(end.outcome.steps < 100000);
        m_window->experimentPanel()->setConfig(test::tinyConfig(12));
    }

    void findsTheLargestBatchUnderTheCap() {
        ConfigForm* form = m_window->experimentPanel()->form();
        QVERIFY(form->setValue(QStringLiteral("memory.cap_mb"), QStringLiteral("24")));
        QSignalSpy trials(m_window->controller(), &RunController::batchTrial);
        QSignalSpy done(m_window->controller(), &RunController::batchSearchFinished);
        QVERIFY(m_window->findBatchSize());
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 120000);
        QCOMPARE(done.at(0).at(2).toString(), QString());
        const int batch = done.at(0).at(0).toInt();
        QVERIFY(batch >= 1);
        QVERIFY(trials.count() >= 1);
        // The largest trial that fitted is the answer, and the panel now uses it.
        int largestFit = 0;
        for (const QList<QVariant>& trial : trials) {
            if (trial.at(1).toBool()) {
                largestFit = std::max(largestFit, trial.at(0).toInt());
                QVERIFY(trial.at(2).toLongLong() <= 24LL << 20);
            }
        }
        QCOMPARE(batch, largestFit);
        QCOMPARE(form->config().train.batch_size, batch);
        QVERIFY(!m_window->controller()->isRunning());
        m_window->experimentPanel()->setConfig(test::tinyConfig(12));
    }

    void compareTwoRuns() {
        QVERIFY(m_window->experimentPanel()->form()->setValue(QStringLiteral("train.batch_size"),
                                                              QStringLiteral("8")));
        const RunEnd second = runAndWait();
        QCOMPARE(second.status(), RunStatus::Completed);
        m_completed.push_back(second.runId);

        RunsPage* runs = m_window->runsPage();
        runs->selectRuns(m_completed);
        QCOMPARE(runs->selectedRunIds(), m_completed);
        ComparePage* compare = m_window->comparePage();
        QSignalSpy loaded(compare, &ComparePage::loaded);
        runs->compareSelected();
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 20000);
        QCOMPARE(m_window->tabs()->currentIndex(), int(MainWindow::CompareTab));
        QCOMPARE(compare->runs().size(), 2);

        // Overlaid curves, one per run, with the runs' points.
        QCOMPARE(compare->lossPlot()->runGraph(0)->dataCount(), 12);
        QCOMPARE(compare->memoryPlot()->runGraph(1)->dataCount(), 12);
        QVERIFY(compare->lossPlot()->runGraph(0)->pen().color() !=
                compare->lossPlot()->runGraph(1)->pen().color());
        QVERIFY(compare->lossPlot()->legend->itemCount() >= 2);
        // x by time: the keys become the wall time of the samples.
        compare->setTimeAxis(true);
        const MetricRow firstStep =
            *std::find_if(compare->runs()[0].metrics.begin(), compare->runs()[0].metrics.end(),
                          [](const MetricRow& r) { return r.phase == "step"; });
        QCOMPARE(compare->lossPlot()->runGraph(0)->data()->constBegin()->key,
                 firstStep.wall_ms / 1000.0);
        compare->setTimeAxis(false);
        QCOMPARE(compare->lossPlot()->runGraph(0)->data()->constBegin()->key,
                 double(firstStep.step));

        // Settings: only the batch size differs; "differences only" hides the rest.
        SettingsDiffTable* settings = compare->settingsTable();
        QCOMPARE(settings->differingKeys(), QStringList{QStringLiteral("train.batch_size")});
        QCOMPARE(settings->visibleRowCount(), 1);
        settings->setDifferencesOnly(false);
        QCOMPARE(settings->visibleRowCount(), int(config_keys().size()));
        settings->setDifferencesOnly(true);

        // Peak breakdown bars side by side, and the final metrics.
        QCOMPARE(compare->breakdownChart()->barCount(), 2);
        for (int i = 0; i < 2; ++i) {
            const MemoryBreakdown& breakdown = compare->runs()[i].record.outcome.breakdown;
            QCOMPARE(compare->breakdownChart()->valueMiB(i, 2),
                     double(breakdown.gradients) / (1 << 20));
        }
        // Each run beside what the estimator predicted for it.
        compare->setShowPredicted(true);
        QCOMPARE(compare->breakdownChart()->barCount(), 4);
        for (int i = 0; i < 2; ++i) {
            const auto& prediction = compare->runs()[i].record.prediction;
            QVERIFY(prediction.has_value());
            QCOMPARE(compare->breakdownChart()->valueMiB(2 * i + 1, 5),
                     double(prediction->breakdown.activations) / (1 << 20));
        }
        compare->setShowPredicted(false);
        QCOMPARE(compare->breakdownChart()->barCount(), 2);
        QCOMPARE(compare->metricsTable()->model()->rowCount(), 2);
        QCOMPARE(compare->metricsTable()->model()->index(1, 1).data().toString(),
                 QStringLiteral("completed"));

        // What differs at the peak, A = the first run, B = the second, read back from the
        // database: the batch size changes the activations; the rows are the engine's diff.
        MemoryDiffView* diffView = compare->memoryDiff();
        const MemoryDiff diff =
            diff_memory(compare->runs()[0].record.outcome, compare->runs()[1].record.outcome);
        QVERIFY(!compare->runs()[1].record.outcome.by_module.empty());
        QVERIFY(!diff.by_category.empty());
        const MemoryDiffModel* diffTable = diffView->model();
        QCOMPARE(diffTable->rowCount(), int(2 + diff.by_category.size() + diff.by_module.size()));
        const auto cell = [diffTable](int row, int column) {
            return diffTable->index(row, column).data().toString();
        };
        QCOMPARE(cell(0, MemoryDiffModel::Figure), QStringLiteral("By category"));
        QCOMPARE(cell(1, MemoryDiffModel::A), formatBytes(diff.by_category.front().a_bytes));
        QCOMPARE(cell(1, MemoryDiffModel::B), formatBytes(diff.by_category.front().b_bytes));
        QVERIFY2(diffView->summary().contains(formatBytes(std::llabs(diff.b_peak - diff.a_peak))),
                 qPrintable(diffView->summary()));
    }

    void differenceAtThePeakListsCategoriesThenModulesLargestFirst() {
        // Two made-up outcomes, so that every kind of row is there.
        CompareRun a;
        a.record.id = 1;
        a.record.outcome.peak_bytes = 100 << 20;
        a.record.outcome.breakdown.activations = 40 << 20;
        a.record.outcome.breakdown.parameters = 10 << 20;
        a.record.outcome.by_module = {{"block 1", 5 << 20, 0, 0, 20 << 20},
                                      {"block 2", 5 << 20, 0, 0, 20 << 20}};
        CompareRun b = a;
        b.record.id = 2;
        b.record.outcome.peak_bytes = 70 << 20;
        b.record.outcome.breakdown.activations = 10 << 20;
        b.record.outcome.breakdown.parameters = 12 << 20;
        b.record.outcome.by_module = {{"block 1", 5 << 20, 0, 0, 1 << 20},
                                      {"block 2", 5 << 20, 0, 0, 9 << 20},
                                      {"head", 2 << 20, 0, 0, 0}};
        MemoryDiffView view;
        view.setRuns({a, b});
        const MemoryDiffModel* table = view.model();
        const QStringList expected = {
            QStringLiteral("By category"),
            QStringLiteral("activations|40.0 MiB|10.0 MiB|-30.0 MiB"),
            QStringLiteral("parameters|10.0 MiB|12.0 MiB|+2.0 MiB"),
            QStringLiteral("By module"),
            QStringLiteral("block 1 · activations|20.0 MiB|1.0 MiB|-19.0 MiB"),
            QStringLiteral("block 2 · activations|20.0 MiB|9.0 MiB|-11.0 MiB"),
            QStringLiteral("head · parameters|0 B|2.0 MiB|+2.0 MiB")};
        QStringList rows;
        for (int row = 0; row < table->rowCount(); ++row) {
            QStringList cells;
            for (int column = 0; column < table->columnCount(); ++column) {
                if (const QVariant text = table->index(row, column).data(); text.isValid()) {
                    cells << text.toString();
                }
            }
            rows << cells.join('|');
        }
        QCOMPARE(rows, expected);
        QVERIFY2(view.summary().contains(QStringLiteral("30.0 MiB lower")),
                 qPrintable(view.summary()));
        // Swapped, every difference changes sign.
        view.choose(1, 0);
        QCOMPARE(table->index(1, MemoryDiffModel::Difference).data().toString(),
                 QStringLiteral("+30.0 MiB"));
        QVERIFY(view.summary().contains(QStringLiteral("30.0 MiB higher")));
    }

    void exportPlotAndCsv() {
        const qint64 runId = m_completed.front();
        LossPlot* plot = m_window->livePage()->lossPlot();
        m_window->showPage(MainWindow::LiveTab);
        const QString png = m_dir.filePath("loss.png");
        QCOMPARE(savePlot(plot, png), QString());
        QImage image(png);
        QVERIFY(!image.isNull());
        QCOMPARE(image.width(), plot->width() * 2);  // written at twice the resolution
        QCOMPARE(image.height(), plot->height() * 2);
        // From the window (File > Export plot, right-click) the figure carries a title that
        // names the run; the plot on screen stays without one.
        QVERIFY2(plot->exportTitle().startsWith(
                     QStringLiteral("Run %1 (").arg(m_window->livePage()->currentRunId())),
                 qPrintable(plot->exportTitle()));
        const int rows = plot->plotLayout()->rowCount();
        const QString titled = m_dir.filePath("loss-titled.png");
        QCOMPARE(plot->exportImage(titled), QString());
        QCOMPARE(plot->plotLayout()->rowCount(), rows);
        const QImage titledImage(titled);
        QCOMPARE(titledImage.size(), image.size());
        QVERIFY(titledImage != image);  // the title moved the axes down
        QCOMPARE(savePlot(plot, m_dir.filePath("loss.pdf")), QString());
        QFile pdf(m_dir.filePath("loss.pdf"));
        QVERIFY(pdf.open(QIODevice::ReadOnly));
        QCOMPARE(pdf.read(5), QByteArray("%PDF-"));
        if (svgExportAvailable()) {
            QCOMPARE(savePlot(plot, m_dir.filePath("loss.svg")), QString());
            QFile svg(m_dir.filePath("loss.svg"));
            QVERIFY(svg.open(QIODevice::ReadOnly));
            QVERIFY(svg.readAll().contains("<svg"));
        }
        QVERIFY(!savePlot(plot, m_dir.filePath("loss.bmpx")).isEmpty());
        // The suggested file name says what the figure is (it was "compareMemoryPlot.png").
        QVERIFY2(plot->suggestedFileName().startsWith(
                     QStringLiteral("run-%1-").arg(m_window->livePage()->currentRunId())),
                 qPrintable(plot->suggestedFileName()));
        QVERIFY(plot->suggestedFileName().endsWith(QStringLiteral("-loss-and-validation.png")));
        // A series hidden on screen is not in the exported legend.
        if (svgExportAvailable()) {
            MemoryPlot* memory = m_window->livePage()->memoryPlot();
            memory->deviceUsed()->setVisible(false);
            const QString hiddenName = memory->deviceUsed()->name();
            QCOMPARE(memory->exportImage(m_dir.filePath("memory.svg")), QString());
            QFile svg(m_dir.filePath("memory.svg"));
            QVERIFY(svg.open(QIODevice::ReadOnly));
            const QByteArray drawn = svg.readAll();
            QVERIFY(drawn.contains(memory->peak()->name().toUtf8()));
            QVERIFY2(!drawn.contains(hiddenName.toUtf8()), qPrintable(hiddenName));
            QVERIFY(memory->legend->hasItemWithPlottable(memory->deviceUsed()));  // restored
            memory->deviceUsed()->setVisible(true);
        }

        const RunStore& store = m_window->database()->store();
        const std::vector<MetricRow> metrics = store.metrics(runId);
        const QString csvPath = m_dir.filePath("run.csv");
        QCOMPARE(exportRuns(store, {runId}, csvPath), QString());
        QFile csv(csvPath);
        QVERIFY(csv.open(QIODevice::ReadOnly | QIODevice::Text));
        const QStringList lines = QString::fromUtf8(csv.readAll()).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), int(metrics.size()) + 1);
        const QStringList header = lines.front().split(',');
        QVERIFY(header.contains(QStringLiteral("step")));
        QVERIFY(header.contains(QStringLiteral("loss")));
        int stepRows = 0;
        const int phaseColumn = header.indexOf(QStringLiteral("phase"));
        for (const QString& line : lines.mid(1)) {
            stepRows += line.split(',').value(phaseColumn) == QLatin1String("step") ? 1 : 0;
        }
        QCOMPARE(stepRows, 12);

        const QString jsonPath = m_dir.filePath("run.json");
        QCOMPARE(exportRuns(store, {runId}, jsonPath), QString());
        QFile json(jsonPath);
        QVERIFY(json.open(QIODevice::ReadOnly));
        const QJsonObject object = QJsonDocument::fromJson(json.readAll()).object();
        QCOMPARE(object.value(QStringLiteral("run_id")).toInteger(), runId);
        QCOMPARE(object.value(QStringLiteral("status")).toString(), QStringLiteral("completed"));

        // Several runs: one CSV with a run_id column.
        QCOMPARE(exportRuns(store, m_completed, m_dir.filePath("runs.csv")), QString());
        QFile both(m_dir.filePath("runs.csv"));
        QVERIFY(both.open(QIODevice::ReadOnly));
        QVERIFY(both.readLine().startsWith("run_id,"));
    }

    void cleanupTestCase() { m_window.reset(); }
};

OOMLAB_UI_TEST(MainWindowTest)
#include "main_window_test.moc"
