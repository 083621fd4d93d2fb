// The Class window against a real `mlflow server` on 127.0.0.1: a class of 6 students, each
// sending from their own database by oomlab-cli under their login name, all training at once
// while the lecturer follows (bench/class_import.sh measures a class of 30 from the command
// line); each run is plotted live, listed whole at the refresh after it was sent, and opens
// in Compare; a server that stops is said, the runs stay. A workbench's run is on the server
// while it trains; a lesson's runs carry each student's prediction, counted after the reveal.
// Needs MLflow
// (OOMLAB_TRACKER_PYTHON, which `./oomlab.sh test` sets) and skips without it.
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QHash>
#include <QLineEdit>
#include <QProcess>
#include <QSet>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include <unistd.h>

#include <algorithm>
#include <csignal>

#include "class_server.h"
#include "common/formatting.h"
#include "compare/compare_page.h"
#include "experiment/experiment_panel.h"
#include "export/tracker_send.h"
#include "lessons/lesson_flow.h"
#include "live/run_controller.h"
#include "oomlab/common/errors.h"
#include "oomlab/lessons/lesson.h"
#include "oomlab/trackers/mlflow_import.h"
#include "runs/class_plot.h"
#include "runs/class_window.h"
#include "runs/run_database.h"
#include "runs/runs_page.h"
#include "ui_test_support.h"
#include "window/main_menus.h"

using namespace oomlab;
using namespace oomlab::ui;

class ClassWindowTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    test::ClassServer m_class;
    QString m_uri;

private slots:
    void initTestCase() {
        const QString python = qEnvironmentVariable("OOMLAB_TRACKER_PYTHON");
        if (python.isEmpty() || qEnvironmentVariableIsEmpty("OOMLAB_CLI")) {
            QSKIP("OOMLAB_TRACKER_PYTHON or OOMLAB_CLI is not set (./oomlab.sh test sets both)");
        }
        QVERIFY2(m_class.start(python, m_dir.path()),
                 qPrintable("mlflow server did not start; its log ends:\n" + m_class.logEnd()));
        m_uri = m_class.uri();
    }

    void cleanupTestCase() { m_class.stop(); }

    // A student's workbench set to send each run to the class's server, under the name the
    // student gave: the run is there while it trains (made, not yet whole: what the class's
    // import counts as being sent), and at its end the same MLflow run goes on, whole, once,
    // though the student turned the sending off meanwhile. A run of the same database killed
    // while it was sent is ended there by that sending.
    void aWorkbenchRunIsOnTheServerWhileItTrains() {
        const TrackerTarget before = TrackerTarget::remembered();  // what the class window reads
        TrackerTarget{true, m_uri, QStringLiteral("workbench"), {}, true, QStringLiteral("ada")}
            .remember();
        RunStore lecturer = RunStore::open(ss(m_dir.filePath(QStringLiteral("follow.sqlite"))));
        trackers::MlflowSource source;
        source.tracking_uri = ss(m_uri);
        source.experiment = "workbench";
        const auto imported = [&]() -> trackers::MlflowImport {
            try {
                return trackers::import_from_mlflow(lecturer, source);
            } catch (const BadInput&) {  // no experiment yet: nothing was sent
                return {};
            }
        };
        // Before it, a run of the same database killed while it was sent (a crash: nothing
        // sent its end): the server holds it running until the workbench's next sending.
        QProcess* killed = m_class.startStudent(
            this, QStringLiteral("ada"),
            {QStringLiteral("run"), QStringLiteral("--mlflow-experiment"),
             QStringLiteral("workbench"), QStringLiteral("--pace"), QStringLiteral("slow"),
             QStringLiteral("--set"), QStringLiteral("train.max_steps=20000")});
        QTRY_VERIFY_WITH_TIMEOUT(imported().being_sent == 1, 60000);
        killed->kill();
        QVERIFY(killed->waitForFinished(30000));

        MainWindow window(test::windowOptions(m_dir.filePath(QStringLiteral("ada.sqlite")),
                                              test::tinyConfig(40)));
        window.show();
        window.controller()->setPace(RunController::Pace::Slow);  // 120 ms a step, until seen
        QSignalSpy finished(window.controller(), &RunController::runFinished);
        QTest::mouseClick(window.experimentPanel()->runButton(), Qt::LeftButton);

        bool seenWhileTraining = false;
        while (finished.isEmpty() && !seenWhileTraining) {
            seenWhileTraining = imported().being_sent == 2;  // the killed one too
            QTest::qWait(200);
        }
        QVERIFY2(seenWhileTraining, "the run was not on the server while it trained");
        // Seen: the rest of its 40 steps need no watching.
        window.controller()->setPace(RunController::Pace::Full);
        // Sending each run turned off meanwhile: this one still ends where it began (else it
        // would stay running there, never whole).
        TrackerTarget{true, m_uri, QStringLiteral("workbench"), {}, false, {}}.remember();
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 60000);
        QCOMPARE(finished.at(0).at(0).value<RunEnd>().status(), RunStatus::Completed);
        // The end goes on in the same MLflow run: one run, whole, under the student's name;
        // and the killed run is ended there, whole: none is left being sent.
        trackers::MlflowImport whole;
        QTRY_VERIFY_WITH_TIMEOUT((whole = imported()).on_server == 2, 30000);
        QCOMPARE(whole.being_sent, std::size_t{0});
        QMap<RunStatus, RunRecord> runs;
        for (const std::int64_t id : whole.present) {
            const RunRecord run = *lecturer.find_run(id);
            QVERIFY2(qs(run.name).startsWith(QStringLiteral("ada: ")), run.name.c_str());
            runs.insert(run.outcome.status, run);
        }
        QCOMPARE(runs.value(RunStatus::Completed).outcome.steps, 40);
        QVERIFY(runs.value(RunStatus::Interrupted).outcome.steps > 0);
        before.remember();
    }

    // A lesson in class: three students at their terminals and one at the workbench predict,
    // their lesson's runs reach the server with the prediction; the lecturer's window counts
    // the answers only once revealed, against what each student's runs measured.
    void theClassPredictionsAreCountedAfterTheReveal() {
        const QString experiment = QStringLiteral("lessons");
        const QStringList predicted = {QStringLiteral("batch 128,over-3x"),
                                       QStringLiteral("batch 128,1.5x-3x"),
                                       QStringLiteral("same,under-1.5x")};
        QList<QProcess*> students;
        for (int i = 0; i < predicted.size(); ++i) {
            QProcess* cli = m_class.startStudent(
                this, QStringLiteral("s%1").arg(i + 1),
                {QStringLiteral("lesson"), QStringLiteral("run"), QStringLiteral("batch-size"),
                 QStringLiteral("--mlflow-experiment"), experiment, QStringLiteral("--predict"),
                 predicted[i], QStringLiteral("--set"), QStringLiteral("train.max_steps=1")});
            students << cli;
        }
        // The workbench's student predicts "batch 128 needs the most, more than 3 times".
        const TrackerTarget before = TrackerTarget::remembered();
        TrackerTarget{true, m_uri, experiment, {}, true, QStringLiteral("wb")}.remember();
        Lesson lesson = find_or_load_lesson("batch-size");
        lesson.base.emplace_back("train.max_steps", "1");
        {
            MainWindow window(test::windowOptions(m_dir.filePath(QStringLiteral("wb.sqlite")),
                                                  test::tinyConfig(1)));
            window.show();
            LessonFlow* flow = window.openLesson(lesson);
            flow->next();
            flow->predict(1, 2);
            flow->next();
            QSignalSpy finished(window.controller(), &RunController::lessonFinished);
            QTest::mouseClick(flow->findChild<QPushButton*>(QStringLiteral("runLesson")),
                              Qt::LeftButton);
            QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 120000);
            // Its runs' ends go on in what was sent while they trained.
            QTRY_VERIFY_WITH_TIMEOUT(!window.runsPage()->trackerSender()->busy(), 60000);
        }
        before.remember();
        // Each run keeps what it was sent with, for when it is sent again.
        {
            const RunStore student =
                RunStore::open(ss(m_dir.filePath(QStringLiteral("wb.sqlite"))));
            for (const std::int64_t run : {1, 2}) {
                const auto tags = student.find_run(run)->tracker_tags;
                QCOMPARE(qs(tags.at("oomlab.lesson")), QStringLiteral("batch-size"));
                QCOMPARE(qs(tags.at("oomlab.lesson_run")), QString::number(run - 1));
                QVERIFY(tags.count("oomlab.prediction") == 1);
            }
        }
        for (QProcess* cli : students) {
            QTRY_COMPARE_WITH_TIMEOUT(cli->state(), QProcess::NotRunning, 120000);
            QVERIFY2(cli->exitCode() == 0, cli->readAllStandardError().constData());
        }

        auto window = test::shownWindow(m_dir.filePath(QStringLiteral("lesson-lecturer.sqlite")));
        QVERIFY(window);
        ClassWindow* classWindow = window->menus()->openClassWindow();
        classWindow->uriField()->setText(m_uri);
        classWindow->experimentField()->setText(experiment);
        classWindow->follow(true);
        // Every lesson run ended on the server, the workbench's too; the answers wait.
        QTRY_VERIFY_WITH_TIMEOUT(
            classWindow->status().contains(QStringLiteral("8 runs from 4 students: 8 completed")),
            30000);
        QVERIFY2(
            classWindow->status().contains(QStringLiteral("4 students predicted for batch-size")),
            qPrintable(classWindow->status()));
        QVERIFY(classWindow->predictionsText().isEmpty());
        classWindow->revealPredictions(true);
        QVERIFY(!classWindow->table()->isVisible());  // the counts take its place
        const QString counted = classWindow->predictionsText();
        for (const QString& said :
             {QStringLiteral("batch-size: 4 students predicted"),
              QStringLiteral("2 batch 128 needs the most, more than 3 times the least"),
              QStringLiteral("Measured, by the runs of 4 of them"),
              QStringLiteral("4 batch 128 needs the most, more than 3 times the least"),
              QStringLiteral("2 of 4 students' runs disagree"),
              QStringLiteral("s2 predicted batch 128 needs the most, 1.5 to 3 times the least"),
              QStringLiteral("s3 predicted they need about the same")}) {
            QVERIFY2(counted.simplified().contains(said), qPrintable(said + "\n" + counted));
        }
        QVERIFY(!counted.contains(QStringLiteral("wb predicted")));  // right
        window->setPresentationMode(true);
        classWindow->resize(1024, 768);
        QTest::qWait(200);
        test::saveScreenshot(classWindow,
                             QStringLiteral("screenshot-presentation-predictions.png"));
        window->setPresentationMode(false);
        classWindow->revealPredictions(false);
        QVERIFY(classWindow->table()->isVisible() && classWindow->predictionsText().isEmpty());
        classWindow->follow(false);
    }

    // A class trains at once while the lecturer follows (a refresh every 2 s): each run is
    // on the class's plots, listed whole by the refresh after it was sent, and opens in Compare
    // by student. Half the class trains until the window has seen them training, then stops
    // (Ctrl+C: their run ends cancelled, sent whole), so that each is seen live however fast
    // the machine (at most 5,000 steps: one never seen ends completed, and the test says
    // so); the others train 20 steps. One student's run leaks its loss graph and runs
    // out of memory: listed so, and crossed on the plots where it stopped.
    void aClassTrainsLiveOnTheProjector() {
        // The fewest that show every state at once (bench/class_import.sh times a class of 30).
        constexpr int kStudents = 6;
        constexpr int kLive = 3;  // students 01 to 03 train until seen
        auto window = test::shownWindow(m_dir.filePath(QStringLiteral("lecturer.sqlite")));
        QVERIFY(window);
        ClassWindow* classWindow = window->menus()->openClassWindow();
        classWindow->uriField()->setText(m_uri);
        classWindow->setRefreshSeconds(2);
        classWindow->follow(true);
        QVERIFY(classWindow->following());
        // Nobody has sent yet: the experiment is not there, and the window says so.
        QTRY_VERIFY_WITH_TIMEOUT(
            classWindow->status().contains(QStringLiteral("has no experiment")), 30000);
        // In the workbench's words: its field, not the command line's option.
        QVERIFY2(classWindow->status().contains(QStringLiteral("the Experiment field")) &&
                     !classWindow->status().contains(QStringLiteral("--")),
                 qPrintable(classWindow->status()));

        QElapsedTimer clock;
        clock.start();
        QHash<QString, qint64> ended;    // student -> when their run was sent (ms)
        QHash<QString, QProcess*> live;  // the students who train until seen
        const QString leaker = QStringLiteral("student-%1").arg(kStudents, 2, 10, QLatin1Char('0'));
        for (int i = 1; i <= kStudents; ++i) {
            const QString student = QStringLiteral("student-%1").arg(i, 2, 10, QLatin1Char('0'));
            const bool leaks = student == leaker;
            const bool untilSeen = i <= kLive;
            const auto set = [](const QString& key, const QString& value) {
                return QStringList{QStringLiteral("--set"), key + QLatin1Char('=') + value};
            };
            const int steps = leaks ? 30 : untilSeen ? 5000 : 20;
            QStringList settings = set(QStringLiteral("train.max_steps"), QString::number(steps));
            if (untilSeen) {  // idle between steps while the window is watched, not working
                settings << QStringLiteral("--pace") << QStringLiteral("slow");
            }
            if (leaks) {
                settings << set(QStringLiteral("model.kind"), QStringLiteral("transformer"))
                         << set(QStringLiteral("train.padding"), QStringLiteral("fixed"))
                         << set(QStringLiteral("memory.cap_mb"), QStringLiteral("150"))
                         << set(QStringLiteral("debug.keep_loss_graph"), QStringLiteral("true"));
            }
            QProcess* cli = m_class.startStudent(
                this, student,
                QStringList{QStringLiteral("run"), QStringLiteral("--name"),
                            leaks ? QStringLiteral("leak") : QStringLiteral("batch 32")} +
                    settings);
            const int expected = leaks ? 3 : untilSeen ? 130 : 0;
            connect(cli, &QProcess::finished, this,
                    [&ended, &clock, student, expected, cli](int code) {
                        const QString said = QString::fromUtf8(cli->readAllStandardError());
                        QVERIFY2(code == expected && !said.contains(QStringLiteral("was not sent")),
                                 qPrintable(QStringLiteral("%1 exited with %2, not %3: %4")
                                                .arg(student)
                                                .arg(code)
                                                .arg(expected)
                                                .arg(said)));
                        ended[student] = clock.elapsed();
                    });
            if (untilSeen) {
                live[student] = cli;
            }
        }
        // At each refresh: who was seen training (a step past 0, their process not yet ended),
        // and how far behind their training the view was; those seen are stopped.
        QSet<QString> seenRunning;
        QVector<qint64> behind;
        connect(classWindow, &ClassWindow::refreshed, this, [&] {
            const qint64 now = QDateTime::currentMSecsSinceEpoch();
            for (const trackers::ClassRun& run : classWindow->progress().runs) {
                const QString student = qs(run.student);
                if (run.status == RunStatus::Running && !run.loss.empty() &&
                    run.loss.back().step > 0 && !ended.contains(student) &&
                    !seenRunning.contains(student)) {
                    seenRunning.insert(student);
                    behind << now - run.last_ms;
                    if (QProcess* cli = live.value(student)) {
                        ::kill(pid_t(cli->processId()), SIGINT);
                    }
                }
            }
        });
        QHash<qint64, qint64> seen;  // run -> when the window first listed it whole (ms)
        while (seen.size() < kStudents && clock.elapsed() < 240000) {
            QTest::qWait(50);
            for (const qint64 run : classWindow->listedRuns()) {
                seen.insert(run, seen.value(run, clock.elapsed()));
            }
        }
        QCOMPARE(seen.size(), kStudents);
        QTRY_COMPARE_WITH_TIMEOUT(ended.size(), kStudents, 30000);
        const QString counted =
            QStringLiteral("%1 runs from %1 students: %2 completed, 1 out of memory, %3 cancelled")
                .arg(kStudents)
                .arg(kStudents - kLive - 1)
                .arg(kLive);
        QVERIFY2(classWindow->status().contains(counted), qPrintable(classWindow->status()));
        // Sent whole (each run's run.json), the class's runs leave nothing unsaid: no notes.
        auto* notes = classWindow->findChild<QPushButton*>(QStringLiteral("classNotes"));
        QVERIFY(notes && !notes->isVisible());
        QVERIFY2(classWindow->notes().isEmpty(), qPrintable(classWindow->notes()));
        // Every student who trained until seen was seen training, and is on both plots.
        for (auto student = live.cbegin(); student != live.cend(); ++student) {
            QVERIFY2(seenRunning.contains(student.key()), qPrintable(student.key()));
        }
        for (ClassPlot* plot : {classWindow->lossPlot(), classWindow->memoryPlot()}) {
            QCOMPARE(plot->runLines(), kStudents);
            QVERIFY(plot->median()->dataCount() > 10);
            QCOMPARE(plot->outOfMemory()->dataCount(), 1);  // where the leak stopped
            QVERIFY(plot->outOfMemory()->data()->at(0)->key > 0);
        }
        const QList<QTableWidgetItem*> leak =
            classWindow->table()->findItems(leaker, Qt::MatchExactly);
        QCOMPARE(leak.size(), 1);
        QCOMPARE(classWindow->table()->item(leak[0]->row(), 2)->text(),
                 QStringLiteral("out of memory"));
        QVector<qint64> delays;
        for (auto run = seen.cbegin(); run != seen.cend(); ++run) {
            const QString name =
                QString::fromStdString(window->database()->store().find_run(run.key())->name);
            const QString student = name.section(QLatin1String(": "), 0, 0);
            QVERIFY2(ended.contains(student), qPrintable(name));
            delays << run.value() - ended[student];
        }
        std::sort(delays.begin(), delays.end());
        std::sort(behind.begin(), behind.end());
        qInfo(
            "%d students at once: while they trained the view was %lld-%lld ms (median %lld) "
            "behind their last step; each run listed whole %lld-%lld ms (median %lld) after its "
            "student's process ended; all %d sent by %lld ms",
            kStudents, behind.front(), behind.back(), behind[behind.size() / 2], delays.front(),
            delays.back(), delays[delays.size() / 2], kStudents,
            *std::max_element(ended.cbegin(), ended.cend()));

        // On the projector: presentation mode's text and lines, at 1024x768, the plots keep
        // room for their curves and the table for a few students.
        window->setPresentationMode(true);
        QVERIFY2(classWindow->minimumSizeHint().width() <= 1024 &&
                     classWindow->minimumSizeHint().height() <= 768,
                 qPrintable(QStringLiteral("needs %1x%2")
                                .arg(classWindow->minimumSizeHint().width())
                                .arg(classWindow->minimumSizeHint().height())));
        classWindow->resize(1024, 768);
        QTest::qWait(200);  // laid out and drawn
        for (ClassPlot* plot : {classWindow->lossPlot(), classWindow->memoryPlot()}) {
            const int line = QFontMetrics(plot->font()).height();
            QVERIFY2(plot->axisRect()->rect().height() >= plot->minimumDataLines() * line,
                     qPrintable(QStringLiteral("%1: %2 px for lines of %3 px")
                                    .arg(plot->objectName())
                                    .arg(plot->axisRect()->rect().height())
                                    .arg(line)));
        }
        QVERIFY(classWindow->table()->viewport()->height() >=
                3 * classWindow->table()->rowHeight(0));
        test::saveScreenshot(classWindow, QStringLiteral("screenshot-presentation-class.png"));
        window->setPresentationMode(false);

        QSignalSpy compare(classWindow, &ClassWindow::compareRequested);
        emit classWindow->compareRequested(classWindow->listedRuns().mid(0, 3));
        QCOMPARE(compare.size(), 1);
        QTRY_COMPARE(window->tabs()->currentIndex(), int(MainWindow::CompareTab));

        // A class sent by an earlier version: read from its series, and what MLflow does not
        // hold of them is said under a button, not in the counts.
        QVERIFY(m_class.sendAsAnEarlierVersion(QStringLiteral("earlier class")));
        classWindow->follow(false);
        classWindow->experimentField()->setText(QStringLiteral("earlier class"));
        classWindow->follow(true);
        QTRY_VERIFY_WITH_TIMEOUT(
            classWindow->notes().contains(QStringLiteral("MLflow holds a run's series")), 30000);
        QCOMPARE(classWindow->listedRuns().size(), 1);
        QVERIFY(notes->isVisible());
        QCOMPARE(notes->text(), QStringLiteral("Notes (1)"));
        auto* notesText = classWindow->findChild<QLabel*>(QStringLiteral("classNotesText"));
        QVERIFY(notesText && !notesText->isVisible());  // the room sees the plots
        notes->click();
        QVERIFY(notesText->isVisible());
        notes->click();

        // The server stops: said at the next refresh, the runs listed stay.
        m_class.stop();
        QTRY_VERIFY_WITH_TIMEOUT(classWindow->status().contains(QStringLiteral("did not answer")),
                                 30000);
        QCOMPARE(classWindow->listedRuns().size(), 1);
        classWindow->follow(false);
        // Another server: the last one's runs and notes go at once, not at its first answer.
        classWindow->uriField()->setText(QStringLiteral("http://127.0.0.1:1"));
        classWindow->follow(true);
        QVERIFY(classWindow->listedRuns().isEmpty());
        QCOMPARE(classWindow->lossPlot()->runLines(), 0);
        QVERIFY(classWindow->notes().isEmpty());
        classWindow->follow(false);
    }
};

OOMLAB_UI_TEST(ClassWindowTest)
#include "class_window_test.moc"
