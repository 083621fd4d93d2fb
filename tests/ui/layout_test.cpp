// Every view fits the screens the workbench is used on (a 1024×768 projector, a 1366×768
// laptop), at the desktop's text size and in presentation mode: the window never needs to
// grow past the screen, no control is squeezed below the size its text needs, plots and
// tables keep room to be read (a page scrolls instead), legends wrap instead of cutting
// their entries and labels never cover one another (layout_checks.h).
#include <QDockWidget>
#include <QMainWindow>
#include <QPlainTextEdit>
#include <QScrollArea>
#include <QScrollBar>
#include <QTabWidget>
#include <QTableView>
#include <QToolBar>
#include <QToolButton>
#include <QtTest>

#include <algorithm>

#include "common/formatting.h"
#include "compare/compare_page.h"
#include "experiment/config_form.h"
#include "experiment/experiment_panel.h"
#include "layout_checks.h"
#include "lessons/lesson_flow.h"
#include "lessons/lesson_text.h"
#include "live/failure_panel.h"
#include "live/live_page.h"
#include "live/loss_plot.h"
#include "live/memory_plot.h"
#include "live/run_controller.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/store/run_store.h"
#include "plots/themed_plot.h"
#include "runs/run_database.h"
#include "runs/runs_model.h"
#include "runs/runs_page.h"
#include "ui_test_support.h"
#include "window/main_window.h"

using namespace oomlab;
using namespace oomlab::ui;
using namespace oomlab::ui::test;

class LayoutTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::unique_ptr<MainWindow> m_window;

    void runQueue(const QVector<QueuedRun>& runs) {
        QSignalSpy done(m_window->controller(), &RunController::queueFinished);
        m_window->controller()->startQueue(runs);
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 120000);
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        m_window = std::make_unique<MainWindow>(
            test::windowOptions(m_dir.filePath("runs.sqlite"), test::tinyConfig(12)));
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));

        // Every view with content: a completed run, one that adapted and one out of memory
        // (its failure panel with fixes stays on the live page), with long names.
        ExperimentConfig adapted = test::tinyConfig(12);
        adapted.train.batch_size = 64;
        adapted.memory.cap_mb = 14;
        adapted.memory.on_oom = OnOom::Adapt;
        ExperimentConfig oom = test::tinyConfig(12);
        oom.train.batch_size = 256;
        oom.memory.cap_mb = 8;
        runQueue({{test::tinyConfig(12), QStringLiteral("baseline with the dataset's vocabulary")},
                  {adapted, QStringLiteral("batch 64 under a 14 MiB cap, adapting")},
                  {oom, QStringLiteral("batch 256 under an 8 MiB cap, out of memory")}});
        // As in a lesson's second run: the first one's lines stay, named in the legends.
        for (const QString& earlier : {QStringLiteral("run 1 (batch 16, dataset vocabulary)"),
                                       QStringLiteral("run 2 (batch 64, adapting)")}) {
            m_window->livePage()->lossPlot()->keepAsEarlierRun(earlier);
            m_window->livePage()->memoryPlot()->keepAsEarlierRun(earlier);
        }
        QSignalSpy loaded(m_window->comparePage(), &ComparePage::loaded);
        m_window->compareRuns({1, 2, 3});
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 30000);
    }

    void everyViewFitsTheScreen_data() {
        QTest::addColumn<int>("page");
        QTest::addColumn<QSize>("screen");
        QTest::addColumn<double>("zoom");
        const QVector<QPair<const char*, MainWindow::Page>> pages = {
            {"live", MainWindow::LiveTab},
            {"runs", MainWindow::RunsTab},
            {"compare", MainWindow::CompareTab}};
        for (const QSize screen : {QSize(1024, 768), QSize(1366, 768)}) {
            for (const double zoom : {1.0, MainWindow::kPresentationZoom}) {
                for (const auto& [name, page] : pages) {
                    QTest::addRow("%s %dx%d zoom %.1f", name, screen.width(), screen.height(), zoom)
                        << int(page) << screen << zoom;
                }
            }
        }
    }

    void everyViewFitsTheScreen() {
        QFETCH(int, page);
        QFETCH(QSize, screen);
        QFETCH(double, zoom);
        // The screen first, then what a person does on it: zoom and switch views. Neither may
        // make the window grow past the screen.
        m_window->setMaximumSize(screen);
        m_window->resize(screen);
        QTest::qWait(50);
        m_window->setPresentationMode(zoom >= MainWindow::kPresentationZoom);
        m_window->showPage(MainWindow::Page(page));
        QApplication::processEvents();
        QTest::qWait(100);  // the new text size, the panel shown or hidden, coalesced replots
        // Presenting, the plots get the screen; the experiment panel is back afterwards.
        QCOMPARE(m_window->findChild<QDockWidget*>(QStringLiteral("experimentDock"))->isVisible(),
                 zoom < MainWindow::kPresentationZoom);

        const QSize needed = m_window->minimumSizeHint().expandedTo(m_window->minimumSize());
        QVERIFY2(needed.width() <= screen.width() && needed.height() <= screen.height(),
                 qPrintable(QStringLiteral("the window needs %1x%2; largest minimums:\n%3")
                                .arg(needed.width())
                                .arg(needed.height())
                                .arg(largestMinimums(m_window.get(), needed.width() > screen.width()
                                                                         ? Qt::Horizontal
                                                                         : Qt::Vertical))));
        QCOMPARE(m_window->size(), screen);
        const QStringList clipped = onceSettled([&] { return clippedControls(m_window.get()); });
        QVERIFY2(clipped.isEmpty(), qPrintable(clipped.join('\n')));
        const QStringList cut = onceSettled(
            [&] { return crampedPlots(m_window.get()) + crampedTables(m_window.get()); });
        QVERIFY2(cut.isEmpty(), qPrintable(cut.join('\n')));

        // Every action of the Runs page is on its tool bar, none behind its » menu; every
        // heading and cell of its table is read whole at this text size.
        if (MainWindow::Page(page) == MainWindow::RunsTab) {
            const QStringList elided =
                onceSettled([&] { return elidedTableText(m_window->runsPage()); });
            QVERIFY2(elided.isEmpty(), qPrintable(elided.join('\n')));
            auto* actions = m_window->findChild<QToolBar*>(QStringLiteral("runsActions"));
            QVERIFY(actions);
            auto* more = actions->findChild<QToolButton*>(QStringLiteral("qt_toolbar_ext_button"));
            QVERIFY2(!more || !more->isVisible(), "actions hidden behind the tool bar's menu");
        }

        // The failure panel is as tall as its text, no more: its blank gaps squashed the
        // plots under it.
        if (MainWindow::Page(page) == MainWindow::LiveTab) {
            // Every event line is read whole, without scrolling sideways.
            auto* log =
                m_window->livePage()->findChild<QPlainTextEdit*>(QStringLiteral("eventLog"));
            QVERIFY(log && !log->toPlainText().isEmpty());
            QCOMPARE(log->horizontalScrollBar()->maximum(), 0);
            const FailurePanel* failure = m_window->livePage()->failurePanel();
            QVERIFY(failure->isVisible());
            QVERIFY2(failure->height() <= failure->sizeHint().height() + 1,
                     qPrintable(QStringLiteral("the failure panel is %1 px high, its text %2 px")
                                    .arg(failure->height())
                                    .arg(failure->sizeHint().height())));
        }

        // The live view's memory tabs (by phase, by module, staircase) fit the same screen.
        if (MainWindow::Page(page) == MainWindow::LiveTab) {
            QTabWidget* tabs = m_window->livePage()->memoryTabs();
            for (int tab = tabs->count() - 1; tab >= 0; --tab) {
                tabs->setCurrentIndex(tab);
                QApplication::processEvents();
                QTest::qWait(50);
                const QSize tabNeeds = m_window->minimumSizeHint();
                QVERIFY2(tabNeeds.width() <= screen.width() && tabNeeds.height() <= screen.height(),
                         qPrintable(QStringLiteral("tab %1 needs %2x%3")
                                        .arg(tabs->tabText(tab))
                                        .arg(tabNeeds.width())
                                        .arg(tabNeeds.height())));
                QCOMPARE(m_window->size(), screen);
                const QStringList cramped = onceSettled([&] {
                    return elidedTableText(m_window->livePage()) +
                           crampedPlots(m_window->livePage()) + crampedTables(m_window->livePage());
                });
                QVERIFY2(cramped.isEmpty(), qPrintable(cramped.join('\n')));
            }
        }
    }

    // A lesson's flow opens beside the window; on a small screen it must fit too, and showing
    // it or the comparison it ends with never makes the window wider.
    void everyLessonFlowFitsTheSmallScreen() {
        const QSize screen(1024, 768);
        const LessonCatalog catalog = loadLessonCatalog();
        QVERIFY2(!catalog.lessons.empty(), qPrintable(catalog.error));
        for (const double zoom : {1.0, MainWindow::kPresentationZoom}) {
            m_window->setPresentationMode(zoom >= MainWindow::kPresentationZoom);
            m_window->setMaximumSize(screen);
            m_window->resize(screen);
            for (const Lesson& lesson : catalog.lessons) {
                LessonFlow* flow = m_window->openLesson(lesson);
                QVERIFY(flow);
                QApplication::processEvents();
                const QSize needed = flow->minimumSizeHint().expandedTo(flow->minimumSize());
                QVERIFY2(needed.width() <= screen.width() && needed.height() <= screen.height(),
                         qPrintable(QStringLiteral("%1 at zoom %2 needs %3x%4:\n%5")
                                        .arg(qs(lesson.name))
                                        .arg(zoom)
                                        .arg(needed.width())
                                        .arg(needed.height())
                                        .arg(largestMinimums(flow, needed.width() > screen.width()
                                                                       ? Qt::Horizontal
                                                                       : Qt::Vertical))));
                QCOMPARE(m_window->size(), screen);
                if (zoom >= MainWindow::kPresentationZoom && lesson.name == "batch-size") {
                    flow->next();  // the question a room is asked
                    flow->resize(flow->size().boundedTo(screen));
                    QTest::qWait(100);
                    test::saveScreenshot(flow,
                                         QStringLiteral("screenshot-presentation-lesson.png"));
                }
                flow->close();
            }
        }
        m_window->setPresentationMode(false);
    }

    // After a lesson of four two-process runs, presenting on a projector: the comparison of
    // eight memory curves still fits, with the panel hidden and shown again (Ctrl+E), and the
    // window fits the screen again after presenting (its minimum grew to 674x910).
    void aComparisonOfSeveralProcessRunsFitsThePresentation() {
        const QSize screen(1024, 768);
        QVector<qint64> ids;
        {
            RunStore store = RunStore::open(m_dir.filePath("runs.sqlite").toStdString());
            const std::vector<MetricRow> rows = store.metrics(1);
            for (const char* shard :
                 {"none", "optimizer", "gradients, 1 MiB buckets", "gradients, one bucket"}) {
                const std::int64_t id =
                    store.create_run({std::string("sharding-the-optimizer-state: ") + shard, "{}",
                                      "cpu", "0.1.0", "1.13", /*world_size=*/2});
                std::vector<MetricRow> ranks = rows;
                for (MetricRow row : rows) {
                    row.rank = 1;
                    ranks.push_back(row);
                }
                store.append_metrics(id, ranks);
                store.finish_run(id, store.find_run(1)->outcome);
                ids << id;
            }
        }
        m_window->setMaximumSize(screen);
        m_window->resize(screen);
        QSignalSpy loaded(m_window->comparePage(), &ComparePage::loaded);
        m_window->compareRuns(ids);
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 30000);
        m_window->showPage(MainWindow::CompareTab);
        QDockWidget* dock = m_window->findChild<QDockWidget*>(QStringLiteral("experimentDock"));
        // What is wrong once the layouts have settled (each change of size asks them again;
        // on a busy machine that takes a few turns of the event loop), or nothing.
        const auto fits = [&](const QString& when) {
            QSize needed;
            QStringList cut;
            for (int turn = 0; turn < 20; ++turn) {
                QApplication::processEvents();
                QTest::qWait(100);
                needed = m_window->minimumSizeHint().expandedTo(m_window->minimumSize());
                // Lays the legends out at their widths.
                cut = crampedPlots(m_window.get()) + crampedTables(m_window.get());
                if (needed.width() <= screen.width() && needed.height() <= screen.height() &&
                    m_window->size() == screen && cut.isEmpty()) {
                    return QString();
                }
            }
            return QStringLiteral("%1: the window is %2x%3 and needs %4x%5; %6\n%7")
                .arg(when)
                .arg(m_window->width())
                .arg(m_window->height())
                .arg(needed.width())
                .arg(needed.height())
                .arg(cut.join(QStringLiteral("; ")), largestMinimums(m_window.get(), Qt::Vertical));
        };
        // Presenting, every plot and table keeps room to be read and the page scrolls the
        // rest (it fitted by squeezing them); back at the desk it fits without scrolling.
        const auto* scroll = m_window->findChild<QScrollArea*>(QStringLiteral("compareScroll"));
        QVERIFY(scroll);
        m_window->setPresentationMode(true);
        QString failed = fits(QStringLiteral("presenting"));
        QVERIFY2(failed.isEmpty(), qPrintable(failed));
        dock->show();
        failed = fits(QStringLiteral("presenting with the panel"));
        QVERIFY2(failed.isEmpty(), qPrintable(failed));
        m_window->setPresentationMode(false);
        failed = fits(QStringLiteral("after presenting"));
        QVERIFY2(failed.isEmpty(), qPrintable(failed));
        QCOMPARE(scroll->verticalScrollBar()->maximum(), 0);
        m_window->setMaximumSize(QWIDGETSIZE_MAX, QWIDGETSIZE_MAX);
    }

    // Rows and headings follow the text size up to the largest zoom (the rows kept the
    // desktop's height and presentation text overlapped them).
    void tableRowsFollowTheTextSize() {
        m_window->resize(1600, 1000);
        m_window->showPage(MainWindow::RunsTab);
        for (const double zoom : {1.0, MainWindow::kPresentationZoom, 2.5}) {
            // Presentation mode, zoomed in from its 1.6x to the largest.
            m_window->setPresentationMode(zoom >= MainWindow::kPresentationZoom);
            m_window->setZoom(zoom);
            QApplication::processEvents();
            QTest::qWait(50);
            const QStringList cramped = onceSettled([&] { return crampedTables(m_window.get()); });
            QVERIFY2(cramped.isEmpty(),
                     qPrintable(QStringLiteral("zoom %1: %2").arg(zoom).arg(cramped.join('\n'))));
        }
        m_window->setPresentationMode(false);
    }

    // The help box under the form keeps one height whatever the setting under the pointer (it
    // grew from 3 to 6 lines and moved the form under the pointer), at either zoom.
    void theHelpBoxNeverMovesTheForm() {
        ExperimentPanel* panel = m_window->experimentPanel();
        m_window->resize(1366, 768);
        for (const double zoom : {1.0, MainWindow::kPresentationZoom}) {
            m_window->setPresentationMode(zoom >= MainWindow::kPresentationZoom);
            m_window->experimentPanel()->parentWidget()->show();  // the dock, shown when presenting
            panel->explain(qs(config_keys().front().name));
            // The zoom's and the dock's layout settle (many turns of the event loop on a loaded
            // machine: CI saw the form still growing after 2 s): it stays put for 300 ms.
            QRect settled;
            for (int turn = 0, still = 0; turn < 200 && still < 3; ++turn) {
                const QRect now = panel->form()->parentWidget()->geometry();
                still = now == settled ? still + 1 : 0;
                settled = now;
                QTest::qWait(100);
            }
            const int height = panel->explanationBox()->height();
            const QRect form = panel->form()->parentWidget()->geometry();
            int longest = 0;
            for (const ConfigKeyInfo& key : config_keys()) {
                panel->explain(qs(key.name));
                QApplication::processEvents();
                longest = std::max(longest, int(key.help.size()));
                QCOMPARE(panel->explanationBox()->height(), height);
                QCOMPARE(panel->form()->parentWidget()->geometry(), form);
            }
            QVERIFY(longest > 200);  // some help needs more than the box shows: it scrolls
        }
        m_window->setPresentationMode(false);
    }

    // Presenting, every plot's lines are wide enough for the back of a room (they stayed 1 to
    // 1.5 px); back at the desk, as they were.
    void presentationWidensEveryPlotsLines() {
        const auto widths = [this] {
            QVector<double> all;
            for (ThemedPlot* plot : m_window->findChildren<ThemedPlot*>()) {
                for (int i = 0; i < plot->plottableCount(); ++i) {
                    // Lines, not the phase plot's markers without a line.
                    const auto* graph = qobject_cast<QCPGraph*>(plot->plottable(i));
                    if (graph && graph->lineStyle() != QCPGraph::lsNone) {
                        all << graph->pen().widthF();
                    }
                }
            }
            return all;
        };
        m_window->setPresentationMode(false);
        QApplication::processEvents();
        const QVector<double> desk = widths();
        QVERIFY(!desk.isEmpty());
        m_window->setPresentationMode(true);
        QApplication::processEvents();  // the font's change reaches the plots
        const QVector<double> presenting = widths();
        QCOMPARE(presenting.size(), desk.size());
        for (int i = 0; i < desk.size(); ++i) {
            QVERIFY(presenting[i] >= 2.5 * desk[i] - 1e-9);
            QVERIFY(presenting[i] >= 2.5);
        }
        m_window->setPresentationMode(false);
        QApplication::processEvents();
        QCOMPARE(widths(), desk);
    }

    // Presenting at 1024x768 with the experiment panel shown again (Ctrl+E): the Live page
    // fits the width left beside it (it scrolled sideways), its plots still readable, and the
    // panel shows more than two settings.
    void presentingWithThePanelTheLivePageScrollsOnlyDown() {
        const QSize screen(1024, 768);
        m_window->setMaximumSize(screen);
        m_window->resize(screen);
        m_window->setPresentationMode(true);
        m_window->showPage(MainWindow::LiveTab);
        auto* dock = m_window->findChild<QDockWidget*>(QStringLiteral("experimentDock"));
        QVERIFY(dock);
        dock->show();
        for (int turn = 0; turn < 5; ++turn) {
            QApplication::processEvents();
            QTest::qWait(50);
        }
        QCOMPARE(m_window->size(), screen);
        auto* scroll = m_window->findChild<QScrollArea*>(QStringLiteral("liveScroll"));
        QVERIFY(scroll);
        QVERIFY2(
            scroll->horizontalScrollBar()->maximum() == 0,
            qPrintable(QStringLiteral("the Live page is %1 px wide in %2 px; largest minimums:\n%3")
                           .arg(scroll->widget()->minimumSizeHint().width())
                           .arg(scroll->viewport()->width())
                           .arg(largestMinimums(scroll->widget(), Qt::Horizontal))));
        const QStringList cramped = onceSettled([&] { return crampedPlots(m_window->livePage()); });
        QVERIFY2(cramped.isEmpty(), qPrintable(cramped.join('\n')));
        // The panel keeps room for its settings: the predicted breakdown's legend names only
        // what the bar holds (eight rows of it left two settings in view).
        auto* form = dock->findChild<QScrollArea*>(QStringLiteral("experimentFormScroll"));
        QVERIFY(form);
        const int line = form->fontMetrics().height();
        QVERIFY2(form->viewport()->height() >= 8 * line,
                 qPrintable(QStringLiteral("the settings have %1 px, a line is %2")
                                .arg(form->viewport()->height())
                                .arg(line)));
        m_window->setPresentationMode(false);
        QApplication::processEvents();
    }

    void cleanupTestCase() { m_window.reset(); }
};

OOMLAB_UI_TEST(LayoutTest)
#include "layout_test.moc"
