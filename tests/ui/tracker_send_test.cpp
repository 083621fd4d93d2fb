// Runs sent to a tracker from the workbench: the dialog's checks and memory of its target,
// the Runs page's Send to tracker through the dialog and its answer, and a run sent when it
// ends. TensorBoard (a folder) stands for both trackers here: MLflow's server is exercised
// by tests/trackers through the same engine calls.
#include <QApplication>
#include <QDir>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QProgressBar>
#include <QRadioButton>
#include <QTemporaryDir>
#include <QtTest>

#include "export/tracker_send.h"
#include "http_test_server.h"
#include "oomlab/trackers/mlflow_export.h"
#include "runs/runs_page.h"
#include "ui_test_support.h"

using namespace oomlab;
using namespace oomlab::ui;

namespace {

// The event files under `logDir`, for run `runId`.
QStringList eventFiles(const QString& logDir, qint64 runId) {
    QStringList files;
    const QDir dir(logDir);
    for (const QString& folder :
         dir.entryList({QStringLiteral("%1-*").arg(runId)}, QDir::Dirs | QDir::NoDotAndDotDot)) {
        for (const QString& file :
             QDir(dir.filePath(folder)).entryList({QStringLiteral("events.out.tfevents.*")})) {
            files << dir.filePath(folder + QLatin1Char('/') + file);
        }
    }
    return files;
}

// A tracking server that is always busy: each request answered 503 with a Retry-After of 30 s.
test::HttpTestServer busyServer() {
    return test::HttpTestServer([](const std::string&) {
        return test::HttpTestServer::reply("503 Service Unavailable", "", "Retry-After: 30\r\n");
    });
}

}  // namespace

class TrackerSendTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;

private slots:
    void dialogRefusesWhatCannotBeSentToAndRemembersTheRest() {
        TrackerDialog dialog(2);
        auto* uri = dialog.findChild<QLineEdit*>(QStringLiteral("trackerUri"));
        QVERIFY(uri);
        QCOMPARE(uri->text(), QStringLiteral("http://127.0.0.1:5000"));  // MLflow's default
        uri->setText(QStringLiteral("127.0.0.1:5000"));
        dialog.acceptIfValid();
        QVERIFY2(dialog.problemShown().contains(QStringLiteral("http://HOST:PORT")),
                 qPrintable(dialog.problemShown()));
        QCOMPARE(dialog.result(), int(QDialog::Rejected));

        // A student's name on a shared account, kept for every run sent after.
        auto* user = dialog.findChild<QLineEdit*>(QStringLiteral("trackerUser"));
        QVERIFY(user);
        QVERIFY2(
            user->placeholderText().startsWith(QString::fromStdString(trackers::sender_name({}))),
            qPrintable(user->placeholderText()));
        user->setText(QStringLiteral("  ada "));

        const QList<QRadioButton*> kinds = dialog.findChildren<QRadioButton*>();
        QCOMPARE(kinds.size(), 2);
        kinds[1]->setChecked(true);  // TensorBoard, with no folder yet
        dialog.acceptIfValid();
        QVERIFY(dialog.problemShown().contains(QStringLiteral("log folder")));
        dialog.findChild<QLineEdit*>(QStringLiteral("trackerLogDir"))
            ->setText(m_dir.filePath("tb"));
        dialog.acceptIfValid();
        QCOMPARE(dialog.result(), int(QDialog::Accepted));
        const TrackerTarget saved = TrackerTarget::remembered();
        QVERIFY(!saved.mlflow);
        QCOMPARE(saved.logDir, m_dir.filePath("tb"));
        QCOMPARE(saved.trackingUri, QStringLiteral("127.0.0.1:5000"));  // kept as typed
        QCOMPARE(saved.user, QStringLiteral("ada"));
        TrackerDialog again(1);  // opens on what was chosen
        QCOMPARE(again.target().logDir, m_dir.filePath("tb"));
        QVERIFY(!again.target().mlflow);
    }

    void runsPageSendsTheSelectedRunsAndSaysWhat() {
        const QString logDir = m_dir.filePath("sent");
        TrackerTarget{false, {}, {}, logDir, false, {}}.remember();
        auto window = test::shownWindow(m_dir.filePath("runs.sqlite"));
        QVERIFY(window);
        const RunEnd end = test::runAndWait(*window);
        QCOMPARE(end.status(), RunStatus::Completed);
        QVERIFY(eventFiles(logDir, end.runId).isEmpty());  // not sent each run
        RunsPage* runs = window->runsPage();
        runs->selectRuns({end.runId});
        // The dialog, then the answer's message box, as a user would go through them.
        QString told;
        QTimer answer;
        connect(&answer, &QTimer::timeout, this, [&] {
            QWidget* modal = QApplication::activeModalWidget();
            if (auto* dialog = qobject_cast<TrackerDialog*>(modal)) {
                dialog->acceptIfValid();
            } else if (auto* box = qobject_cast<QMessageBox*>(modal)) {
                told = box->text();
                box->accept();
            }
        });
        answer.start(50);
        runs->sendSelected();
        QTRY_VERIFY_WITH_TIMEOUT(!told.isEmpty(), 30000);
        QVERIFY2(told.contains(QStringLiteral("-> TensorBoard")), qPrintable(told));
        QCOMPARE(eventFiles(logDir, end.runId).size(), 1);
        QVERIFY(told.contains(eventFiles(logDir, end.runId).front()));
    }

    void aRunIsSentWhenItEndsWhereChosen() {
        const QString logDir = m_dir.filePath("each");
        TrackerTarget{false, {}, {}, logDir, true, {}}.remember();
        auto window = test::shownWindow(m_dir.filePath("each.sqlite"));
        QVERIFY(window);
        const RunEnd end = test::runAndWait(*window);
        QCOMPARE(end.status(), RunStatus::Completed);
        QTRY_COMPARE_WITH_TIMEOUT(eventFiles(logDir, end.runId).size(), 1, 30000);
        // The file is written before the report reaches the window.
        QTRY_VERIFY(
            window->runsPage()->lastSendReport().contains(QStringLiteral("-> TensorBoard")));
    }

    // Sending from the dialog shows that it sends; an error keeps the dialog open with the
    // error, so the target can be corrected and sent to again.
    void anErrorKeepsTheDialogOpenWithIt() {
        TrackerTarget{
            true, QStringLiteral("http://127.0.0.1:9"), QStringLiteral("OOM Lab"), {}, false, {}}
            .remember();
        TrackerSender sender;
        TrackerDialog dialog(1);
        dialog.sendWith(&sender, m_dir.filePath("runs.sqlite"), {1});
        dialog.show();
        dialog.acceptIfValid();
        QVERIFY(dialog.sending());
        auto* progress = dialog.findChild<QProgressBar*>(QStringLiteral("trackerProgress"));
        QVERIFY(progress && progress->isVisible());
        auto* sendingText = dialog.findChild<QLabel*>(QStringLiteral("trackerSending"));
        QVERIFY2(sendingText->text().contains(QStringLiteral("Sending the run to MLflow at")),
                 qPrintable(sendingText->text()));
        QTRY_VERIFY_WITH_TIMEOUT(!dialog.sending(), 30000);
        QVERIFY(dialog.isVisible());
        QVERIFY(!progress->isVisible());
        QVERIFY2(dialog.problemShown().contains(QStringLiteral("did not answer")),
                 qPrintable(dialog.problemShown()));
        QCOMPARE(dialog.result(), int(QDialog::Rejected));  // not closed as sent
        // The error (several lines) is shown whole and squeezes no field of the form (a wrapped
        // label of one line's minimum squashed the form and cut the message).
        QApplication::processEvents();
        auto* problem = dialog.findChild<QLabel*>(QStringLiteral("trackerProblem"));
        const int needed = problem->fontMetrics()
                               .boundingRect(QRect(0, 0, problem->width(), 100000),
                                             Qt::TextWordWrap, problem->text())
                               .height();
        QVERIFY2(problem->height() >= needed,
                 qPrintable(QStringLiteral("%1 px for %2").arg(problem->height()).arg(needed)));
        for (QLineEdit* field : dialog.findChildren<QLineEdit*>()) {
            QVERIFY2(field->height() >= field->minimumSizeHint().height(),
                     qPrintable(field->objectName()));
        }
    }

    // A server that answers it is busy is asked again later, and the dialog says when; the
    // workbench closing (its sender going) does not wait for the server's 30 s.
    void aBusyServerIsAskedAgainAndClosingDoesNotWaitForIt() {
        const test::HttpTestServer server = busyServer();
        TrackerTarget{true, server.uri(), QStringLiteral("OOM Lab"), {}, false, {}}.remember();
        auto sender = std::make_unique<TrackerSender>();
        TrackerDialog dialog(1);
        dialog.sendWith(sender.get(), m_dir.filePath("runs.sqlite"), {1});
        dialog.show();
        dialog.acceptIfValid();
        auto* sendingText = dialog.findChild<QLabel*>(QStringLiteral("trackerSending"));
        QTRY_VERIFY2_WITH_TIMEOUT(
            sendingText->text().contains(QStringLiteral("with status 503: asking again in 30 s "
                                                        "(1 of 7)")),
            qPrintable(sendingText->text()), 20000);
        QVERIFY2(sendingText->text().startsWith(QStringLiteral("Sending the run to MLflow at")),
                 qPrintable(sendingText->text()));
        QElapsedTimer going;
        going.start();
        sender.reset();
        // Well within the 30 s the server asked for: the wait was stopped, not sat out.
        QVERIFY2(going.elapsed() < 20000, qPrintable(QString::number(going.elapsed())));
        QCOMPARE(server.answered(), 1);
    }

    void aTrackerThatIsDownIsToldWithoutStoppingAnything() {
        TrackerSender sender;
        QSignalSpy sent(&sender, &TrackerSender::sent);
        // Port 9 (discard) on loopback: nothing listens there on a test machine.
        sender.send(m_dir.filePath("runs.sqlite"), {1},
                    TrackerTarget{true,
                                  QStringLiteral("http://127.0.0.1:9"),
                                  QStringLiteral("OOM Lab"),
                                  {},
                                  false,
                                  {}},
                    false);
        QTRY_COMPARE_WITH_TIMEOUT(sent.size(), 1, 30000);
        QVERIFY(sent.front().at(1).toBool());  // failed
        QVERIFY2(sent.front().at(0).toString().contains(QStringLiteral("did not answer")),
                 qPrintable(sent.front().at(0).toString()));
    }
};

OOMLAB_UI_TEST(TrackerSendTest)
#include "tracker_send_test.moc"
