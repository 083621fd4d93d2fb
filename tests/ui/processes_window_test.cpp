// The window with several processes: oomlab-cli workers train one run whose rows come back
// from the database into the plots, progress and failure panel as a run of this process's
// would; a saved run of two processes loads and re-runs with two.
#include <QAction>
#include <QPushButton>
#include <QSpinBox>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>

#include "common/formatting.h"
#include "common/run_types.h"
#include "experiment/config_form.h"
#include "experiment/experiment_panel.h"
#include "live/failure_panel.h"
#include "live/live_page.h"
#include "live/loss_plot.h"
#include "live/memory_plot.h"
#include "live/run_controller.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/store/run_store.h"
#include "runs/runs_page.h"
#include "ui_test_support.h"
#include "window/main_window.h"

using namespace oomlab;
using namespace oomlab::ui;

class ProcessesWindowTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::unique_ptr<MainWindow> m_window;

    RunEnd runAndWait() { return test::runAndWait(*m_window); }

private slots:
    void initTestCase() {
        if (qEnvironmentVariableIsEmpty("OOMLAB_CLI")) {
            QSKIP("OOMLAB_CLI is not set (ctest sets it): no oomlab-cli to start");
        }
        QVERIFY(m_dir.isValid());
        m_window = test::shownWindow(m_dir.filePath("runs.sqlite"));
        QVERIFY(m_window);
    }

    // Two processes: oomlab-cli workers train one run; their rows come back from the
    // database into the plots, rank 1's step peak as its own series.
    void twoProcessesTrainOneRunAndPlotEachRank() {
        m_window->experimentPanel()->processesBox()->setValue(2);
        QSignalSpy progress(m_window->controller(), &RunController::progressChanged);
        const RunEnd end = runAndWait();
        m_window->experimentPanel()->processesBox()->setValue(1);
        QCOMPARE(statusName(end.status()), QStringLiteral("completed"));
        // The progress comes from rank 0's rows, with the run's planned total.
        QVERIFY(!progress.isEmpty());
        const auto last = progress.last().at(0).value<TrainProgress>();
        QCOMPARE(last.step, std::int64_t(12));
        QCOMPARE(last.total_steps, std::int64_t(12));
        // The header says the data and the steps as for a run of one process (it said
        // "0 train / 0 validation · 0 steps").
        const QString header = m_window->livePage()->header();
        QVERIFY2(header.contains(QStringLiteral("· 12 steps")), qPrintable(header));
        QVERIFY2(!header.contains(QStringLiteral(" 0 train")), qPrintable(header));
        const RunStore store = RunStore::open(m_dir.filePath("runs.sqlite").toStdString());
        const std::optional<RunRecord> run = store.find_run(end.runId);
        QVERIFY(run);
        QCOMPARE(run->world_size, 2);
        QCOMPARE(run->ranks.size(), std::size_t(2));
        const std::vector<MetricRow> metrics = store.metrics(end.runId);
        int rank1Steps = 0;
        int rank0Losses = 0;
        for (const MetricRow& row : metrics) {
            rank1Steps += row.rank == 1 && row.phase == "step";
            rank0Losses += row.rank == 0 && row.phase == "step" && row.loss;
        }
        QVERIFY(rank1Steps > 0);
        MemoryPlot* memory = m_window->livePage()->memoryPlot();
        QTRY_VERIFY(memory->rankPeak(1) != nullptr);
        QCOMPARE(memory->rankPeak(1)->dataCount(), rank1Steps);
        QCOMPARE(memory->peak()->dataCount(), rank1Steps);  // rank 0's, as many steps
        QCOMPARE(m_window->livePage()->lossPlot()->trainLoss()->dataCount(), rank0Losses);

        // Loading or re-running the run brings its two processes back with its settings.
        RunsPage* runs = m_window->runsPage();
        runs->selectRuns({end.runId});
        QSignalSpy rerun(runs, &RunsPage::rerunRequested);
        QAction* load = nullptr;
        for (QAction* action : runs->findChildren<QAction*>()) {
            load = action->text() == QStringLiteral("Load config") ? action : load;
        }
        QVERIFY(load);
        load->trigger();
        QCOMPARE(m_window->experimentPanel()->processes(), 2);
        m_window->experimentPanel()->processesBox()->setValue(1);
        QSignalSpy finished(m_window->controller(), &RunController::runFinished);
        runs->rerunSelected();
        QCOMPARE(rerun.count(), 1);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
        const RunEnd again = finished.at(0).at(0).value<RunEnd>();
        QCOMPARE(statusName(again.status()), QStringLiteral("completed"));
        QCOMPARE(RunStore::open(m_dir.filePath("runs.sqlite").toStdString())
                     .find_run(again.runId)
                     ->world_size,
                 2);
        m_window->experimentPanel()->processesBox()->setValue(1);
    }

    // A two-process run out of memory gets the failure panel's fixes too, computed for one
    // rank of two: sharding the optimizer state is one of them.
    void twoProcessesOutOfMemoryOfferSharding() {
        ConfigForm* form = m_window->experimentPanel()->form();
        QVERIFY(form->setValue(QStringLiteral("memory.cap_mb"), QStringLiteral("12")));
        m_window->experimentPanel()->processesBox()->setValue(2);
        const RunEnd end = runAndWait();
        m_window->experimentPanel()->processesBox()->setValue(1);
        QVERIFY(form->setValue(QStringLiteral("memory.cap_mb"), QStringLiteral("0")));
        QCOMPARE(statusName(end.status()), QStringLiteral("oom"));
        const Settings shard{{"distributed.shard", "optimizer"}};
        QVERIFY(std::any_of(end.fixes.begin(), end.fixes.end(),
                            [&](const OomFix& fix) { return fix.set == shard; }));
        FailurePanel* panel = m_window->livePage()->failurePanel();
        QVERIFY(!panel->isHidden());
        QCOMPARE(panel->suggestionCount(), int(end.fixes.size()));
        // "oom after 1 step", not "1 steps".
        const QString header = m_window->livePage()->header();
        QVERIFY2(header.contains(QStringLiteral("after %1 in").arg(formatSteps(end.outcome.steps))),
                 qPrintable(header));
        QVERIFY2(!header.contains(QStringLiteral(" 1 steps")), qPrintable(header));
    }

    // The training pace a class watches holds for several processes too: each worker pauses
    // after each step (it was ignored: the workers ran at full speed).
    void thePaceHoldsForEveryProcess() {
        m_window->experimentPanel()->processesBox()->setValue(2);
        m_window->controller()->setPace(RunController::Pace::Slow);
        const RunEnd end = runAndWait();
        m_window->controller()->setPace(RunController::Pace::Full);
        m_window->experimentPanel()->processesBox()->setValue(1);
        QCOMPARE(statusName(end.status()), QStringLiteral("completed"));
        const double paused = double(end.outcome.steps) *
                              RunController::stepPauseMs(RunController::Pace::Slow) / 1000.0;
        QVERIFY2(end.outcome.steps >= 10 && end.outcome.wall_seconds >= paused,
                 qPrintable(QStringLiteral("%1 steps in %2 s")
                                .arg(end.outcome.steps)
                                .arg(end.outcome.wall_seconds)));
    }

    // A refusal only the workers can make (two processes need two full batches) marks the
    // setting it is about, and Run stays off until a setting changes.
    void aRefusalOfTheWorkersMarksItsSetting() {
        ExperimentPanel* panel = m_window->experimentPanel();
        ConfigForm* form = panel->form();
        const QString batch = QStringLiteral("train.batch_size");
        const QString before = qs(get_config_value(form->config(), ss(batch)));
        QVERIFY(form->setValue(batch, QStringLiteral("100000")));
        panel->processesBox()->setValue(2);
        QVERIFY(panel->isValid());  // nothing in this process can tell
        const RunEnd end = runAndWait();
        QVERIFY(end.badInput);
        QCOMPARE(end.badInputKeys, QStringList{batch});
        QVERIFY2(form->errorOf(batch).contains(QStringLiteral("full batches")),
                 qPrintable(form->errorOf(batch)));
        QVERIFY(!panel->isValid());
        QVERIFY(form->setValue(batch, before));
        QVERIFY(form->errorOf(batch).isEmpty());
        QVERIFY(panel->isValid());
        panel->processesBox()->setValue(1);
    }

    // With several processes the search trains every rank in each trial: under a 12 MiB cap
    // no batch fits one process, while two ZeRO-2 ranks fit hundreds each.
    void theBatchSearchTrainsEveryProcess() {
        ConfigForm* form = m_window->experimentPanel()->form();
        const std::vector<std::pair<QString, QString>> settings{
            {QStringLiteral("memory.cap_mb"), QStringLiteral("12")},
            {QStringLiteral("train.optimizer"), QStringLiteral("adam")},
            {QStringLiteral("distributed.shard"), QStringLiteral("gradients")},
            {QStringLiteral("distributed.bucket_mb"), QStringLiteral("1")}};
        for (const auto& [key, value] : settings) {
            QVERIFY2(form->setValue(key, value), qPrintable(key));
        }
        const std::string batchKey = "train.batch_size";
        const QString batchBefore = qs(get_config_value(form->config(), batchKey));
        QSignalSpy done(m_window->controller(), &RunController::batchSearchFinished);
        QSignalSpy trials(m_window->controller(), &RunController::batchTrial);
        QVERIFY(m_window->findBatchSize());
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 120000);
        QCOMPARE(done.at(0).at(0).toInt(), 0);

        m_window->experimentPanel()->processesBox()->setValue(2);
        trials.clear();
        QVERIFY(m_window->findBatchSize());
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 2, 120000);
        const QString message = m_window->statusBar()->currentMessage();
        m_window->experimentPanel()->processesBox()->setValue(1);
        const int found = done.at(1).at(0).toInt();
        QVERIFY2(found > 100, qPrintable(message));
        QVERIFY2(done.at(1).at(2).toString().isEmpty(), qPrintable(done.at(1).at(2).toString()));
        QVERIFY(trials.count() >= 2);  // reported by rank 0 as they came
        QVERIFY2(message.contains(QStringLiteral("fits: %1").arg(found)) &&
                     message.contains(QStringLiteral("trained all 2 processes")),
                 qPrintable(message));
        QCOMPARE(qs(get_config_value(form->config(), batchKey)), QString::number(found));
        QVERIFY(form->setValue(qs(batchKey), batchBefore));
        const ExperimentConfig defaults;
        for (const auto& [key, value] : settings) {
            QVERIFY(form->setValue(key, qs(get_config_value(defaults, ss(key)))));
        }
    }

    // A search of several processes stops with its workers, and says so without a dialog.
    void aStoppedSearchSaysItWasStopped() {
        ConfigForm* form = m_window->experimentPanel()->form();
        QVERIFY(form->setValue(QStringLiteral("memory.cap_mb"), QStringLiteral("24")));
        m_window->experimentPanel()->processesBox()->setValue(2);
        QSignalSpy done(m_window->controller(), &RunController::batchSearchFinished);
        QVERIFY(m_window->findBatchSize());
        m_window->controller()->stop();
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 60000);
        const QString message = m_window->statusBar()->currentMessage();
        m_window->experimentPanel()->processesBox()->setValue(1);
        QVERIFY(form->setValue(QStringLiteral("memory.cap_mb"), QStringLiteral("0")));
        QVERIFY2(!done.at(0).at(2).toString().isEmpty(), "the search had no answer");
        QCOMPARE(message, QStringLiteral("The batch-size search was stopped."));
        QVERIFY(!m_window->controller()->isRunning());
    }

    void cleanupTestCase() { m_window.reset(); }
};

OOMLAB_UI_TEST(ProcessesWindowTest)
#include "processes_window_test.moc"
