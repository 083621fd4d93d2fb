// A memory snapshot opened in the workbench (File → Open memory snapshot…): the engine's own
// snapshot of a run out of memory, the real snapshot PyTorch recorded of GPT-2 (shared data;
// skipped when absent), and a file that is not one.
#include <QAction>
#include <QDir>
#include <QMenuBar>
#include <QProcess>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "common/formatting.h"
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
        SnapshotWindow* window = m_window->menus()->openSnapshot(path);
        QSignalSpy loaded(window, &SnapshotWindow::loaded);
        if (!loaded.wait(30000)) {
            return nullptr;
        }
        return window;
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
        QProcess cli;
        cli.start(qEnvironmentVariable("OOMLAB_CLI"),
                  {"run", "--db", m_dir.filePath("cli.sqlite"), "--set", "memory.cap_mb=8", "--set",
                   "train.batch_size=256", "--set", "debug.memory_snapshot=" + snapshot});
        QVERIFY(cli.waitForFinished(60000));
        QCOMPARE(cli.exitCode(), 3);  // out of memory

        SnapshotWindow* window = openAndWait(snapshot);
        QVERIFY(window);
        QVERIFY2(window->error().isEmpty(), qPrintable(window->error()));
        QVERIFY(window->isVisible());
        const SnapshotDevice& device = window->report().devices.front();
        QCOMPARE(window->timeline()->allocated()->dataCount(), int(device.timeline.size()));
        QCOMPARE(window->timeline()->markerCount(), 2);  // the peak and the OOM
        QCOMPARE(window->timeline()->markerX(1), double(device.ooms.front().event));
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
        window->close();
    }

    void theRealSnapshotOfGpt2() {
        const QString path = QStringLiteral(OOMLAB_SHARED_DATA_DIR) +
                             QStringLiteral("/snapshots/gpt2_generate_2648MiB.pickle");
        if (!QFile::exists(path)) {
            QSKIP("the shared data's GPT-2 snapshot is absent");
        }
        SnapshotWindow* window = openAndWait(path);
        QVERIFY(window);
        QVERIFY2(window->error().isEmpty(), qPrintable(window->error()));
        QCOMPARE(window->kinds()->rowCount(), 3);
        QCOMPARE(cell(window->lines(), 0, 0), QStringLiteral("(allocated before the trace began)"));
        QVERIFY(
            cell(window->lines(), 1, 0).endsWith(QStringLiteral("modeling_bert.py:703 (forward)")));
        QCOMPARE(cell(window->lines(), 1, 1), QStringLiteral("954.8 MiB"));
        QVERIFY2(window->adviceText().contains(QStringLiteral("record the history from the start")),
                 qPrintable(window->adviceText()));
        QVERIFY(window->timeline()->allocated()->dataCount() > 1000);
        QCOMPARE(window->timeline()->markerCount(), 1);  // the peak; no OOM
        window->close();
    }

    void aFileThatIsNoSnapshotSaysWhy() {
        SnapshotWindow* window = openAndWait(m_dir.filePath("runs.sqlite"));
        QVERIFY(window);
        QVERIFY2(window->error().contains(QStringLiteral("not a pickle of plain data")),
                 qPrintable(window->error()));
        QVERIFY(window->summaryText().contains(QStringLiteral("not a pickle")));
        window->close();
    }

    void cleanupTestCase() { m_window.reset(); }
};

QTEST_MAIN(SnapshotWindowTest)
#include "snapshot_window_test.moc"
