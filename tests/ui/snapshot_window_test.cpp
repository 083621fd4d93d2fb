// A memory snapshot opened in the workbench (File → Open memory snapshot…): the engine's own
// snapshot of a run out of memory (its experiment loaded back into the panel, and compared
// with the snapshot of its fix), the real snapshot PyTorch recorded of GPT-2 (shared data;
// skipped when absent), and a file that is not one.
#include <algorithm>

#include <QAction>
#include <QApplication>
#include <QFile>
#include <QHeaderView>
#include <QMenuBar>
#include <QProcess>
#include <QPushButton>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTextDocument>
#include <QtTest>

#include "../engine/snapshot_reader/pickle_bytes.h"
#include "common/formatting.h"
#include "experiment/experiment_panel.h"
#include "oomlab/snapshot_reader/snapshot_sql.h"
#include "snapshot/snapshot_diff_window.h"
#include "snapshot/snapshot_replay_box.h"
#include "snapshot/snapshot_timeline.h"
#include "snapshot/snapshot_window.h"
#include "ui_test_support.h"
#include "window/main_menus.h"
#include "window/main_window.h"

using namespace oomlab;
using namespace oomlab::ui;

class SnapshotWindowTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::unique_ptr<MainWindow> m_window;

    SnapshotWindow* openAndWait(const QString& path) {
        return test::openSnapshotAndWait(*m_window, path);
    }

    // Trains the default experiment with `settings` into the snapshot `name`; its exit code.
    int recordSnapshot(const QString& name, const QStringList& settings) {
        QStringList arguments{"run", "--db", m_dir.filePath("cli.sqlite"), "--set",
                              "debug.memory_snapshot=" + m_dir.filePath(name)};
        for (const QString& setting : settings) {
            arguments << "--set" << setting;
        }
        QProcess cli;
        cli.start(qEnvironmentVariable("OOMLAB_CLI"), arguments);
        return cli.waitForFinished(60000) ? cli.exitCode() : -1;
    }

    static QString cell(const QTableWidget* table, int row, int column) {
        const QTableWidgetItem* item = table->item(row, column);
        return item ? item->text() : QString();
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        m_window = test::shownWindow(m_dir.filePath("runs.sqlite"));
        QVERIFY(m_window);
        bool offered = false;
        for (QAction* action : m_window->menuBar()->findChildren<QAction*>()) {
            offered |= action->text() == QStringLiteral("Open memory &snapshot…");
        }
        QVERIFY(offered);
    }

    // A run out of memory under a cap, with its snapshot: the timeline to the end, the peak and
    // the OOM marked, the forward's activations first, and the verdict of memory in use.
    void theEnginesSnapshotOfARunOutOfMemory() {
        if (qEnvironmentVariableIsEmpty("OOMLAB_CLI")) {
            QSKIP("OOMLAB_CLI is not set (ctest sets it): no oomlab-cli to record a snapshot");
        }
        const QString snapshot = m_dir.filePath("oom.pickle");
        QCOMPARE(recordSnapshot("oom.pickle", {"memory.cap_mb=8", "train.batch_size=256"}),
                 3);  // out of memory

        SnapshotWindow* window = openAndWait(snapshot);
        QVERIFY(window);
        QVERIFY2(window->error().isEmpty(), qPrintable(window->error()));
        QVERIFY(window->isVisible());
        const SnapshotDevice& device = window->report().devices.front();
        QCOMPARE(window->timeline()->allocated()->dataCount(), int(device.timeline.size()));
        QCOMPARE(window->timeline()->markers().markerCount(), 2);  // the peak and the OOM
        // The OOM's marker stands on the timeline's point for the state its event left.
        const std::size_t oom = event_number(device.ooms.front().event);
        QCOMPARE(window->timeline()->markers().markerX(1), double(oom));
        QVERIFY(std::any_of(device.timeline.begin(), device.timeline.end(),
                            [&](const SnapshotPoint& point) { return point.event == oom; }));
        QCOMPARE(cell(window->kinds(), 0, 0), QStringLiteral("forward"));
        QCOMPARE(cell(window->lines(), 0, 0), QStringLiteral("oomlab: forward: activations"));
        QVERIFY2(window->summaryText().contains(QStringLiteral("Out of memory at event")),
                 qPrintable(window->summaryText()));
        QVERIFY2(window->adviceText().contains(QStringLiteral("hold less at the peak")),
                 qPrintable(window->adviceText()));

        // A click on the timeline shows that moment, less than the peak; "Show the peak" goes
        // back.
        window->resize(1000, 700);
        QVERIFY(QTest::qWaitForWindowExposed(window));
        SnapshotTimeline* timeline = window->timeline();
        timeline->renderNow();
        const std::size_t early = device.peak_event / 2;
        const QPoint at(int(timeline->xAxis->coordToPixel(double(early))),
                        int(timeline->yAxis->coordToPixel(timeline->yAxis->range().center())));
        QTest::mouseClick(timeline, Qt::LeftButton, {}, at);
        QVERIFY(timeline->moment().has_value());
        const std::size_t clicked = *timeline->moment();
        QCOMPARE(clicked, timeline->eventAt(at.x()));
        const SnapshotMoment moment = snapshot_moment(device, clicked);
        QVERIFY2(window->momentText().startsWith(QStringLiteral("After event %1 of").arg(clicked)),
                 qPrintable(window->momentText()));
        QVERIFY2(window->momentText().contains(formatBytes(moment.allocated)),
                 qPrintable(window->momentText()));
        QCOMPARE(window->kinds()->rowCount(), int(moment.by_kind.size()));
        QVERIFY(!moment.by_kind.empty());
        QCOMPARE(cell(window->kinds(), 0, 0), qs(moment.by_kind.front().where));
        QVERIFY(moment.allocated < device.peak_allocated);
        window->showMoment(std::nullopt);
        QVERIFY(!timeline->moment().has_value());
        QCOMPARE(cell(window->kinds(), 0, 0), QStringLiteral("forward"));

        // The experiment that recorded it loads into the panel, to be run again with a fix;
        // where the snapshot was opened alone (oomlab --snapshot), the workbench appears.
        QVERIFY(!window->loadExperimentButton()->isHidden());
        m_window->experimentPanel()->setConfig(ExperimentConfig());
        m_window->hide();
        window->loadExperimentButton()->click();
        QVERIFY(m_window->isVisible());
        QCOMPARE(m_window->experimentPanel()->config().train.batch_size, 256);
        QCOMPARE(m_window->experimentPanel()->config().memory.cap_mb, 8);
        m_window->experimentPanel()->setConfig(ExperimentConfig());

        // Save as SQLite: the tables of `oomlab-cli snapshot sql`, adding up to the peak shown;
        // a file of the user's is left as it is.
        QVERIFY(window->findChild<QPushButton*>(QStringLiteral("snapshotSaveSqlite")));
        const QString database = m_dir.filePath("oom.db");
        QCOMPARE(window->saveAsDatabase(database), QString());
        QVERIFY(is_snapshot_database(ss(database)));
        std::vector<std::vector<std::string>> rows;
        query_snapshot_database(ss(database), "SELECT sum(size) FROM at_peak WHERE device = 0",
                                [&](const std::vector<std::string>& row) { rows.push_back(row); });
        QCOMPARE(rows.size(), std::size_t(2));
        QCOMPARE(rows[1][0], std::to_string(device.peak_allocated));
        const QString notes = m_dir.filePath("notes.db");
        QFile mine(notes);
        QVERIFY(mine.open(QIODevice::WriteOnly));
        mine.write("my notes\n");
        mine.close();
        QVERIFY(!window->saveAsDatabase(notes).isEmpty());
        QVERIFY(mine.open(QIODevice::ReadOnly));
        QCOMPARE(mine.readAll(), QByteArray("my notes\n"));
        window->close();
    }

    // At a projector's text size on a 1024x768 screen the window still fits (what does not
    // scrolls inside it), and the tables keep their figures in view, shortening the source
    // lines instead.
    // On a projector's 1000x700, the figures are in view, and what the memory was for is read
    // whole: "(allocated before the trace began)" of a real snapshot read "(allo…egan)".
    void presentedOnASmallScreenTheWindowFitsAndShowsItsFigures_data() {
        QTest::addColumn<QString>("snapshot");
        QTest::addRow("the engine's") << m_dir.filePath("oom.pickle");
        QTest::addRow("GPT-2's") << test::sharedDataDir() +
                                        QStringLiteral("/snapshots/gpt2_generate_2648MiB.pickle");
    }

    void presentedOnASmallScreenTheWindowFitsAndShowsItsFigures() {
        QFETCH(QString, snapshot);
        if (!QFile::exists(snapshot)) {
            QSKIP("the snapshot is absent (no oomlab-cli, or no shared data)");
        }
        m_window->setPresentationMode(true);
        SnapshotWindow* window = openAndWait(snapshot);
        QVERIFY(window);
        const QSize needed = window->minimumSizeHint().expandedTo(window->minimumSize());
        QVERIFY2(
            needed.width() <= 1000 && needed.height() <= 700,
            qPrintable(QStringLiteral("needs %1x%2").arg(needed.width()).arg(needed.height())));
        window->resize(1000, 700);
        QVERIFY(QTest::qWaitForWindowExposed(window));
        QApplication::processEvents();
        QTableWidget* kinds = window->kinds();
        QVERIFY(kinds->rowCount() > 0);
        for (int row = 0; row < kinds->rowCount(); ++row) {
            const QString name = kinds->item(row, 0)->text();
            const int text = kinds->fontMetrics().horizontalAdvance(name);
            QVERIFY2(text < kinds->columnWidth(0),
                     qPrintable(QStringLiteral("\"%1\" in %2 px, its text %3 px")
                                    .arg(name)
                                    .arg(kinds->columnWidth(0))
                                    .arg(text)));
        }
        QVERIFY2(kinds->horizontalScrollBar()->maximum() == 0,
                 qPrintable(QStringLiteral("%1 px wide (at least %2), its columns %3 px")
                                .arg(kinds->width())
                                .arg(kinds->minimumWidth())
                                .arg(kinds->horizontalHeader()->length())));
        for (QTableWidget* table : {window->kinds(), window->lines()}) {
            const QHeaderView* header = table->horizontalHeader();
            for (int column = 1; column < table->columnCount(); ++column) {
                const int right =
                    header->sectionViewportPosition(column) + header->sectionSize(column);
                QVERIFY2(right <= table->viewport()->width(),
                         qPrintable(QStringLiteral("%1: column %2 ends at %3 of %4")
                                        .arg(table->objectName())
                                        .arg(column)
                                        .arg(right)
                                        .arg(table->viewport()->width())));
            }
        }
        window->close();
        m_window->setPresentationMode(false);
    }

    // A transformer before and after a batch a quarter the size: the peak falls, by the
    // forward's activations most of all, and the changes by kind add up to the change of the
    // peak.
    void aSnapshotComparedWithItsFix() {
        if (qEnvironmentVariableIsEmpty("OOMLAB_CLI")) {
            QSKIP("OOMLAB_CLI is not set (ctest sets it): no oomlab-cli to record a snapshot");
        }
        const QStringList transformer{"model.kind=transformer", "train.max_steps=3"};
        QCOMPARE(recordSnapshot("before.pickle", transformer + QStringList{"train.batch_size=128"}),
                 0);
        QCOMPARE(recordSnapshot("after.pickle", transformer + QStringList{"train.batch_size=32"}),
                 0);
        SnapshotWindow* window = openAndWait(m_dir.filePath("before.pickle"));
        QVERIFY(window);
        SnapshotDiffWindow* diff = window->compareWith(m_dir.filePath("after.pickle"));
        QSignalSpy loaded(diff, &SnapshotDiffWindow::loaded);
        QVERIFY(loaded.wait(30000));
        QVERIFY2(diff->error().isEmpty(), qPrintable(diff->error()));
        QCOMPARE(diff->devices().size(), std::size_t(1));
        const SnapshotDeviceDiff& device = diff->devices().front();
        QVERIFY(device.peak_after < device.peak_before);
        QVERIFY2(diff->summaryText().contains(formatBytes(device.peak_before) + " → " +
                                              formatBytes(device.peak_after)),
                 qPrintable(diff->summaryText()));
        QCOMPARE(cell(diff->kinds(), 0, 0), QStringLiteral("forward"));
        QVERIFY(cell(diff->kinds(), 0, 3).startsWith('-'));
        QCOMPARE(diff->kinds()->rowCount(), int(device.kinds.size()));
        std::int64_t changed = 0;
        for (const SnapshotChange& change : device.kinds) {
            changed += change.change();
        }
        QCOMPARE(changed, device.peak_after - device.peak_before);
        diff->close();
        window->close();
    }

    void theRealSnapshotOfGpt2() {
        const QString path =
            test::sharedDataDir() + QStringLiteral("/snapshots/gpt2_generate_2648MiB.pickle");
        if (!QFile::exists(path)) {
            QSKIP("the shared data's GPT-2 snapshot is absent");
        }
        SnapshotWindow* window = openAndWait(path);
        QVERIFY(window);
        QVERIFY2(window->error().isEmpty(), qPrintable(window->error()));
        // The three figures under the names the CLI gives them.
        const SnapshotDevice& device = window->report().devices.front();
        for (const QString& figure : {QStringLiteral("peak allocated %1</b> after event")
                                          .arg(formatBytes(device.peak_allocated)),
                                      QStringLiteral("reserved at that moment %1;")
                                          .arg(formatBytes(device.reserved_at_peak)),
                                      QStringLiteral("most reserved at any time %1;")
                                          .arg(formatBytes(device.peak_reserved))}) {
            QVERIFY2(window->summaryText().contains(figure), qPrintable(window->summaryText()));
        }
        QCOMPARE(window->kinds()->rowCount(), 3);
        QCOMPARE(cell(window->lines(), 0, 0), QStringLiteral("(allocated before the trace began)"));
        QVERIFY(
            cell(window->lines(), 1, 0).endsWith(QStringLiteral("modeling_bert.py:703 (forward)")));
        QCOMPARE(cell(window->lines(), 1, 1), QStringLiteral("954.8 MiB"));
        QVERIFY2(window->adviceText().contains(QStringLiteral("record the history from the start")),
                 qPrintable(window->adviceText()));
        QVERIFY(window->timeline()->allocated()->dataCount() > 1000);
        QVERIFY(window->loadExperimentButton()->isHidden());       // PyTorch's own: no experiment
        QCOMPARE(window->timeline()->markers().markerCount(), 1);  // the peak; no OOM
        window->close();
    }

    // The stages an H200's training script annotated (the optimizer's step and zero_grad,
    // PyTorch's external_annotations): each one's peak said, the highest shaded on the
    // timeline where it ran.
    void theStagesAProgramAnnotatedAreShadedWithTheirPeaks() {
        SnapshotWindow* window =
            openAndWait(test::benchResult("gpu-2026-11-26/snapshots/train-default.pickle.gz"));
        QVERIFY(window);
        QVERIFY2(window->error().isEmpty(), qPrintable(window->error()));
        const QString summary = window->summaryText();
        QVERIFY2(summary.contains(QStringLiteral("Peak allocated by stage")), qPrintable(summary));
        QVERIFY2(summary.contains(QStringLiteral("Optimizer.step#AdamW.step</b> 501.0 MiB (ran 60 "
                                                 "times)")),
                 qPrintable(summary));
        QVERIFY2(summary.contains(QStringLiteral("At the peak allocated: no annotated stage")),
                 qPrintable(summary));
        const SnapshotTimeline* timeline = window->timeline();
        QCOMPARE(timeline->shadedStages().size(), std::size_t(2));
        QCOMPARE(timeline->stageBands().size(), std::size_t(120));
        QCOMPARE(window->report().devices.size(), std::size_t(1));
        const SnapshotStageSpan& first = window->report().devices[0].stage_spans.front();
        QCOMPARE(timeline->stageBands().front()->topLeft->coords().x(), double(first.first));
        QCOMPARE(timeline->stageBands().front()->bottomRight->coords().x(), double(first.end));
        QVERIFY(first.first < first.end);
        window->close();
    }

    // A stage shorter than the time between two events (an optimizer's zero_grad of 100 us on
    // a real Windows snapshot, whose stages showed nothing): drawn as a line where it ran, and
    // said to allocate nothing; a stage with events inside is a band, as before.
    void aStageBetweenTwoEventsIsALineWhereItRan() {
        using snapshot::stage_annotation;
        using snapshot::trace_event;
        const QString path = m_dir.filePath(QStringLiteral("short-stage.pickle"));
        QVERIFY(
            test::writeBytes(path, snapshot::annotated_snapshot(
                                       trace_event("alloc", 0x1000, 4096, true, 10) +
                                           trace_event("alloc", 0x2000, 8192, true, 20) +
                                           trace_event("free_completed", 0x1000, 4096, true, 1000) +
                                           trace_event("free_completed", 0x2000, 8192, true, 1010),
                                       stage_annotation("START", "zero_grad", 0, 30) +
                                           stage_annotation("END", "zero_grad", 0, 130) +
                                           stage_annotation("START", "forward", 0, 5) +
                                           stage_annotation("END", "forward", 0, 25))));
        SnapshotWindow* window = openAndWait(path);
        QVERIFY(window);
        QVERIFY2(window->error().isEmpty(), qPrintable(window->error()));
        const QString summary = window->summaryText();
        QVERIFY2(summary.contains(QStringLiteral("zero_grad</b> 12.0 KiB (ran once, "
                                                 "allocating nothing)")),
                 qPrintable(summary));
        const SnapshotTimeline* timeline = window->timeline();
        QCOMPARE(timeline->stageBands().size(), std::size_t(2));
        for (const QCPItemRect* band : timeline->stageBands()) {
            const double width = band->bottomRight->coords().x() - band->topLeft->coords().x();
            // zero_grad after the second event, with no width: its edge is drawn.
            QCOMPARE(band->pen().style() != Qt::NoPen, width == 0);
            QVERIFY(width > 0 || band->topLeft->coords().x() == 2);
        }
        window->close();
    }

    // A long read shows how far it has come and stops at Cancel, saying so; read again to the
    // end, it shows the snapshot and no more progress.
    void aLongReadShowsItsProgressAndCancels() {
        const QString path = m_dir.filePath("long.pickle");
        QVERIFY(test::writeBytes(path, snapshot::many_allocations(400000)));  // 36 MB
        SnapshotWindow* window = m_window->menus()->openSnapshot(path);
        QSignalSpy loaded(window, &SnapshotWindow::loaded);
        QVERIFY(window->progressBar()->isVisible());
        QVERIFY(window->cancelButton()->isVisible());
        QTest::mouseClick(window->cancelButton(), Qt::LeftButton);
        QVERIFY(loaded.wait(10000));
        QVERIFY2(window->error().contains(QStringLiteral("was cancelled")),
                 qPrintable(window->error()));
        QVERIFY(window->summaryText().contains(QStringLiteral("was cancelled")));
        QVERIFY(!window->progressBar()->isVisible());
        QVERIFY(!window->cancelButton()->isVisible());
        window->open(path);
        QVERIFY(window->progressBar()->isVisible());
        QVERIFY(loaded.wait(60000));
        QVERIFY2(window->error().isEmpty(), qPrintable(window->error()));
        QCOMPARE(window->report().devices.at(0).events, std::size_t(800000));
        QVERIFY(!window->progressBar()->isVisible());
        window->close();
    }

    // Closing a snapshot gives its memory back to the system, not only to the allocator: the
    // process's resident memory after the window is gone is within a fifth of what it was
    // before the snapshot was opened.
    void closingASnapshotGivesItsMemoryBack() {
        // OOMLAB_RSS_SNAPSHOT measures another file, e.g. one of 1 GB made by
        // bench/snapshot_growth.sh.
        QString path = qEnvironmentVariable("OOMLAB_RSS_SNAPSHOT");
        if (path.isEmpty()) {
            path = m_dir.filePath("resident.pickle");
            QVERIFY(
                test::writeBytes(path, snapshot::many_allocations(600000)));  // 54 MB, 1.2M events
        }
        QCoreApplication::processEvents();
        const double before = test::residentMiB();
        SnapshotWindow* window = m_window->menus()->openSnapshot(path);
        QSignalSpy loaded(window, &SnapshotWindow::loaded);
        QVERIFY(loaded.wait(300000));
        QVERIFY2(window->error().isEmpty(), qPrintable(window->error()));
        const double open = test::residentMiB();
        QSignalSpy destroyed(window, &QObject::destroyed);
        window->close();
        QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
        QCOMPARE(destroyed.count(), 1);
        QTest::qWait(200);  // the trim after the window is gone
        const double after = test::residentMiB();
        const QString figures = QStringLiteral("before %1 MiB, open %2 MiB, after %3 MiB")
                                    .arg(before, 0, 'f', 0)
                                    .arg(open, 0, 'f', 0)
                                    .arg(after, 0, 'f', 0);
        qInfo().noquote() << figures;
        QVERIFY2(open > before + 100, qPrintable(figures));
        QVERIFY2(after < before * 1.2, qPrintable(figures));
    }

    // A file that is no snapshot, and a pickle that is no snapshot: the message alone, quotes
    // as quotes, and nothing that pretends to hold data (no plot, no tables, no replay).
    void aFileThatIsNoSnapshotSaysWhy() {
        SnapshotWindow* window = openAndWait(m_dir.filePath("runs.sqlite"));
        QVERIFY(window);
        QVERIFY2(window->error().contains(QStringLiteral("neither a memory snapshot")),
                 qPrintable(window->error()));
        QVERIFY(window->summaryText().contains(QStringLiteral("neither a memory snapshot")));
        window->close();
        const QString path = m_dir.filePath("empty-dict.pickle");
        QVERIFY(test::writeBytes(
            path, std::string("\x80\x02}q\x00.", 6)));  // pickle.dumps({}, protocol=2)
        window = openAndWait(path);
        QVERIFY(window);
        QVERIFY2(window->error().contains(QStringLiteral("\"segments\"")),
                 qPrintable(window->error()));
        QTextDocument shown;
        shown.setHtml(window->summaryText());
        QVERIFY2(shown.toPlainText().contains(QStringLiteral("\"segments\"")),
                 qPrintable(shown.toPlainText()));
        QVERIFY(!window->timeline()->isVisibleTo(window));
        QVERIFY(!window->replayBox()->isVisibleTo(window));
        window->close();
    }

    // A snapshot dumped without a trace (DocuBox's) has no peak: the window, its tables and a
    // comparison with a traced snapshot say when their figures were taken.
    void aSnapshotWithoutATraceIsShownAtTheDump() {
        SnapshotWindow* window = openAndWait(test::fixture(
            QStringLiteral("wild/snapshots/Charran78__DocuBox__dump_snapshot.pickle")));
        QVERIFY(window);
        QVERIFY2(window->error().isEmpty(), qPrintable(window->error()));
        QVERIFY2(window->momentText().startsWith(QStringLiteral("At the dump: ")),
                 qPrintable(window->momentText()));
        QCOMPARE(window->kinds()->horizontalHeaderItem(0)->text(),
                 QStringLiteral("alive at the dump, for"));
        QCOMPARE(window->lines()->horizontalHeaderItem(0)->text(),
                 QStringLiteral("alive at the dump, at"));
        SnapshotDiffWindow* diff = window->compareWith(test::fixture(QStringLiteral(
            "wild/snapshots/Okazaki-Yumemi__CS336__memory_small_forward_128.pickle")));
        QSignalSpy loaded(diff, &SnapshotDiffWindow::loaded);
        QVERIFY(loaded.wait(30000));
        QVERIFY2(diff->error().isEmpty(), qPrintable(diff->error()));
        QCOMPARE(diff->kinds()->horizontalHeaderItem(0)->text(),
                 QStringLiteral("alive at the peak or the dump, for"));
        QVERIFY2(diff->summaryText().contains(QStringLiteral("at the peak or the dump of each")),
                 qPrintable(diff->summaryText()));
        diff->close();
        window->close();
    }

    // A line whose request the allocator rounded up in print (2 B asked, 512 B held) says what
    // was asked, as `snapshot show` does, in its blocks' tooltip.
    void aLineTheAllocatorRoundedSaysWhatWasAskedFor() {
        SnapshotWindow* window = openAndWait(test::fixture(QStringLiteral(
            "wild/snapshots/mryab__efficient-dl-systems__vanilla_ce_snapshot.pickle")));
        QVERIFY(window);
        QVERIFY2(window->error().isEmpty(), qPrintable(window->error()));
        int rounded = -1;
        for (int row = 0; row < window->lines()->rowCount(); ++row) {
            if (cell(window->lines(), row, 0)
                    .endsWith(QStringLiteral("profile_vanilla_ce.py:11 (<module>)"))) {
                rounded = row;
            }
        }
        QVERIFY(rounded >= 0);
        QCOMPARE(cell(window->lines(), rounded, 1), QStringLiteral("512 B"));
        QCOMPARE(cell(window->lines(), rounded, 2), QStringLiteral("1"));
        QCOMPARE(window->lines()->item(rounded, 2)->toolTip(),
                 QStringLiteral("1 block; 2 B asked for"));
        QVERIFY(!window->lines()->item(0, 2)->toolTip().contains(QStringLiteral("asked")));
        window->close();
    }

    void cleanupTestCase() { m_window.reset(); }
};

OOMLAB_UI_TEST(SnapshotWindowTest)
#include "snapshot_window_test.moc"
