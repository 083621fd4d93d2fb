// A memory snapshot replayed in the workbench's snapshot window under what the user asks: other
// allocator settings (a real GPU's trace), another device's memory, and a CPU run estimated on
// a GPU; the replay box speaks of its own controls.
#include <QLineEdit>
#include <QPushButton>
#include <QtTest>

#include <algorithm>

#include "../engine/snapshot_reader/pickle_bytes.h"
#include "snapshot/snapshot_replay_box.h"
#include "snapshot/snapshot_timeline.h"
#include "snapshot/snapshot_window.h"
#include "ui_test_support.h"
#include "window/main_window.h"

using namespace oomlab;
using namespace oomlab::ui;

class SnapshotReplayTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::unique_ptr<MainWindow> m_window;

    SnapshotWindow* openAndWait(const QString& path) {
        return test::openSnapshotAndWait(*m_window, path);
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        m_window = test::shownWindow(m_dir.filePath("runs.sqlite"));
        QVERIFY(m_window);
    }

    // A real GPU's trace (an H200's, gzipped) replayed with expandable segments: typed in and
    // Enter pressed, the replayed reserved line drawn dashed over the recorded one and the
    // figures said; settings PyTorch would refuse are refused naming the key.
    void aRealTraceReplayedUnderOtherAllocatorSettings() {
        SnapshotWindow* window =
            openAndWait(test::benchResult("gpu-2026-11-26/snapshots/train-default.pickle.gz"));
        QVERIFY(window);
        QVERIFY2(window->error().isEmpty(), qPrintable(window->error()));
        SnapshotReplayBox* box = window->replayBox();
        QVERIFY(!window->timeline()->replayed()->visible());
        QSignalSpy replayed(box, &SnapshotReplayBox::replayed);
        box->settings()->setText(QStringLiteral("expandable_segments:True"));
        QTest::keyClick(box->settings(), Qt::Key_Return);
        QVERIFY(replayed.wait(30000));
        QVERIFY2(box->resultText().contains(
                     QStringLiteral("replayed under expandable_segments:True: peak reserved 2.")),
                 qPrintable(box->resultText()));
        QVERIFY(box->resultText().contains(QStringLiteral("147 of 147 segments")));
        QCPGraph* line = window->timeline()->replayed();
        QVERIFY(line->visible());
        QVERIFY(line->dataCount() > 1000);
        double most = 0;
        for (auto point = line->data()->constBegin(); point != line->data()->constEnd(); ++point) {
            most = std::max(most, point->value);
        }
        // The recorded run reserved 6.12 GiB at most; with expandable segments, under 3 GiB.
        QVERIFY2(most > 2800 && most < 3072, qPrintable(QString::number(most)));

        box->settings()->setText(QStringLiteral("expandable_segment:True"));
        QTest::keyClick(box->settings(), Qt::Key_Return);
        QVERIFY(replayed.wait(30000));
        QVERIFY2(box->resultText().contains(QStringLiteral("unknown key")),
                 qPrintable(box->resultText()));
        QVERIFY(!line->visible());
        window->close();
    }

    // A program's CPU run, as `oomlab-cli record` keeps it without CUDA (the profiler's memory
    // events): what it would hold on a GPU (with cuBLAS's 33 MiB of workspaces) and what
    // PyTorch's caching allocator would reserve for it there, named as an estimate.
    void aCpuRunIsEstimatedOnAGpu() {
        const QString path = m_dir.filePath("cpu-trace.json");
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        QByteArray events;
        const qint64 sizes[][3] = {
            {0x1000, 512, 512}, {0x200000, 3 << 20, (3 << 20) + 512}, {0x1000, -512, 3 << 20}};
        for (int i = 0; i < 3; ++i) {
            events += QStringLiteral(R"(%1{"ph": "i", "cat": "cpu_instant_event", "name": )"
                                     R"("[memory]", "pid": 1, "tid": 1, "ts": %2, "args": )"
                                     R"({"Addr": %3, "Bytes": %4, "Total Allocated": %5, )"
                                     R"("Total Reserved": 0, "Device Type": 0, "Device Id": -1}})")
                          .arg(i ? QStringLiteral(", ") : QString())
                          .arg(10 * (i + 1))
                          .arg(sizes[i][0])
                          .arg(sizes[i][1])
                          .arg(sizes[i][2])
                          .toUtf8();
        }
        QVERIFY(file.write("{\"traceEvents\": [" + events + "]}") > 0);
        file.close();
        SnapshotWindow* window = openAndWait(path);
        QVERIFY(window);
        QVERIFY2(window->error().isEmpty(), qPrintable(window->error()));
        QVERIFY2(window->summaryText().contains(
                     QStringLiteral("<b>On a GPU, an estimate</b>: these requests would hold "
                                    "36.0 MiB at most and PyTorch's caching allocator would "
                                    "reserve 54.0 MiB (3 segments;")),
                 qPrintable(window->summaryText()));
        QVERIFY(window->summaryText().contains(QStringLiteral("cuBLAS")));
        window->close();
    }

    // The replay box speaks of its own controls, never of a command's options: a device
    // memory field (in units, refused in words), and a Show all for the model's misses.
    void theReplayBoxNamesItsOwnControls() {
        const QString path = m_dir.filePath("twenty.pickle");
        // No segments recorded: 20 requests disagree with the model.
        QVERIFY(test::writeBytes(path, snapshot::many_allocations(20)));
        SnapshotWindow* window = openAndWait(path);
        QVERIFY(window);
        SnapshotReplayBox* box = window->replayBox();
        QSignalSpy replayed(box, &SnapshotReplayBox::replayed);
        const auto replay = [&] {
            QTest::keyClick(box->deviceMemory(), Qt::Key_Return);
            return replayed.wait(30000);
        };
        QVERIFY(replay());
        QString text = box->resultText();
        QVERIFY2(text.contains(QStringLiteral("15 more (Show all lists them)")), qPrintable(text));
        QVERIFY2(!text.contains(QStringLiteral("--")), qPrintable(text));
        QVERIFY(!box->showAllButton()->isHidden());
        QTest::mouseClick(box->showAllButton(), Qt::LeftButton);
        text = box->resultText();
        QVERIFY2(
            text.contains(QStringLiteral("event 39:")) && !text.contains(QStringLiteral("more (")),
            qPrintable(text));
        QVERIFY(box->showAllButton()->isHidden());

        box->deviceMemory()->setText(QStringLiteral("64 MiB"));
        QVERIFY(replay());
        text = box->resultText();
        QVERIFY2(text.contains(QStringLiteral("capacity: 64.0 MiB, the Device memory field")),
                 qPrintable(text));
        // How close it came on a device of that size, as it ran and replayed.
        QVERIFY2(text.contains(QStringLiteral("as it ran, on the device: ")) &&
                     text.contains(QStringLiteral("left at the closest, after event")),
                 qPrintable(text));
        box->deviceMemory()->setText(QStringLiteral("80"));
        QVERIFY(replay());
        text = box->resultText();
        QVERIFY2(text.contains(QStringLiteral("Device memory 80: 80 B is less than any GPU holds")),
                 qPrintable(text));
        window->close();

        window = openAndWait(test::benchResult("gpu-2026-11-26/snapshots/oom-default.pickle.gz"));
        QVERIFY(window);
        box = window->replayBox();
        QSignalSpy oomReplayed(box, &SnapshotReplayBox::replayed);
        QTest::keyClick(box->deviceMemory(), Qt::Key_Return);
        QVERIFY(oomReplayed.wait(30000));
        text = box->resultText();
        QVERIFY2(text.contains(QStringLiteral("ran out of memory there (the Device memory field "
                                              "sets another)")),
                 qPrintable(text));
        window->close();
    }

    void cleanupTestCase() { m_window.reset(); }
};

OOMLAB_UI_TEST(SnapshotReplayTest)
#include "snapshot_replay_test.moc"
