// "Run it" beside the snapshot window's replay: the program a record came from (kept beside it
// by oomlab-cli record) run again with the settings typed in, its run set beside the recorded
// one and the replay's prediction; a record of no known program offers no Run it.
#include <QApplication>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>
#include <QProcess>
#include <QPushButton>
#include <QTemporaryDir>
#include <QtTest>

#include "snapshot/program_rerun.h"
#include "snapshot/snapshot_replay_box.h"
#include "snapshot/snapshot_window.h"
#include "ui_test_support.h"

using namespace oomlab::ui;

class ProgramRerunTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;

    // The private-pool snapshot (40 MiB reserved), written as PyTorch writes one.
    bool writeSnapshot(const QString& path) {
        QProcess python;
        python.start(QStringLiteral("python3"),
                     {test::fixture(QStringLiteral("snapshots/make_private_pool_trace.py")), path});
        return python.waitForFinished(30000) && python.exitCode() == 0;
    }

    std::unique_ptr<SnapshotWindow> openAndWait(const QString& path) {
        auto window = std::make_unique<SnapshotWindow>();
        QSignalSpy loaded(window.get(), &SnapshotWindow::loaded);
        window->open(path);
        window->show();
        return loaded.wait(30000) ? std::move(window) : nullptr;
    }

private slots:
    void aRecordedProgramIsRunAgainWithTheSettingsTypedIn() {
        const QString record = m_dir.filePath(QStringLiteral("record.pickle"));
        if (!writeSnapshot(record)) {
            QSKIP("no python3 to write the snapshot");
        }
        // The program: a shell that says where it ran and ends with status 3 (no Python, so
        // it records nothing of its own).
        QFile program(record + QStringLiteral(".program.json"));
        QVERIFY(program.open(QIODevice::WriteOnly));
        program.write(QJsonDocument(QJsonObject{{"command", QJsonArray{"sh", "-c", "pwd; exit 3"}},
                                                {"directory", m_dir.path()},
                                                {"exit_code", 1},
                                                {"seconds", 0.5}})
                          .toJson());
        program.close();

        auto window = openAndWait(record);
        QVERIFY(window);
        SnapshotReplayBox* box = window->replayBox();
        QPushButton* runIt = box->rerun()->button();
        QVERIFY(runIt->isVisible());
        QVERIFY2(runIt->toolTip().contains(m_dir.path()), qPrintable(runIt->toolTip()));
        box->settings()->setText(QStringLiteral("expandable_segments:True"));
        QSignalSpy finished(box->rerun(), &ProgramRerun::finished);
        QTest::mouseClick(runIt, Qt::LeftButton);
        QCOMPARE(runIt->text(), QStringLiteral("Stop"));
        QVERIFY(finished.wait(60000));
        const QString text = box->rerun()->resultText();
        QVERIFY2(text.contains(QStringLiteral("nothing else in it was changed")), qPrintable(text));
        // The recorded run (40.0 MiB reserved, exit 1), then the run with the setting (exit 3),
        // beside the replay's prediction for it.
        const QStringList lines = text.split(QLatin1Char('\n'));
        const auto row = [&](const QString& start) {
            for (const QString& line : lines) {
                if (line.trimmed().startsWith(start)) {
                    return line.simplified();
                }
            }
            return QString();
        };
        QVERIFY2(row(QStringLiteral("as run"))
                     .startsWith(QStringLiteral("as run 1 no 14.0 MiB "
                                                "40.0 MiB")),
                 qPrintable(text));
        QVERIFY2(row(QStringLiteral("expandable_segments:True")).contains(QStringLiteral(" 3 no ")),
                 qPrintable(text));
        QVERIFY2(row(QStringLiteral("expandable_segments:True"))
                     .contains(QStringLiteral("exit status 3")),
                 qPrintable(text));
        QCOMPARE(runIt->text(), QStringLiteral("Run it"));
        // The table's lines, wider than the window, scroll sideways: the result asks for no
        // more width than the replay box has (a label of the table asked for 860 px in a box of
        // 766, which widened the window past the screen and hid Run it).
        QApplication::processEvents();
        QVERIFY2(box->rerun()->minimumSizeHint().width() <= box->width() &&
                     box->minimumSizeHint().width() <= box->width(),
                 qPrintable(QStringLiteral("asks for %1 px (its box %2) in a box of %3")
                                .arg(box->rerun()->minimumSizeHint().width())
                                .arg(box->minimumSizeHint().width())
                                .arg(box->width())));
        QVERIFY(runIt->mapTo(window.get(), QPoint(runIt->width(), 0)).x() <= window->width());
    }

    void aRecordOfNoKnownProgramOffersNoRunIt() {
        const QString record = m_dir.filePath(QStringLiteral("alone.pickle"));
        if (!writeSnapshot(record)) {
            QSKIP("no python3 to write the snapshot");
        }
        auto window = openAndWait(record);
        QVERIFY(window);
        QVERIFY(window->replayBox()->rerun()->button()->isHidden());
    }
};

OOMLAB_UI_TEST(ProgramRerunTest)
#include "program_rerun_test.moc"
