// Lessons: the menu lists the engine's lessons (and says which file is broken); running one
// trains its runs one after another through the window, opens the compare view and shows
// the engine's checks of the lesson's claims.
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QtTest>

#include "common/formatting.h"
#include "compare/compare_page.h"
#include "experiment/experiment_panel.h"
#include "lessons/lesson_flow.h"
#include "lessons/lesson_text.h"
#include "live/live_page.h"
#include "live/run_controller.h"
#include "oomlab/config/config_io.h"
#include "ui_test_support.h"
#include "window/main_menus.h"
#include "window/main_window.h"

using namespace oomlab;
using namespace oomlab::ui;

namespace {

void write(const QString& path, const QByteArray& text) {
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(text);
}

QStringList menuTexts(QMenu* menu) {
    QStringList texts;
    for (QAction* action : menu->actions()) {
        texts << action->text();
    }
    return texts;
}

}  // namespace

class LessonTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_good;
    QTemporaryDir m_broken;

private slots:
    void initTestCase() {
        QVERIFY(m_good.isValid() && m_broken.isValid());
        QVERIFY(QDir(m_good.path()).mkpath(QStringLiteral("lessons")));
        write(m_good.filePath("lessons/accumulation.json"), R"({
          "title": "Gradient accumulation",
          "explanation": "Same effective batch.\n\nA fraction of the activations.",
          "base": {"device": "cpu", "train.max_steps": 4, "model.kind": "transformer",
                   "train.padding": "fixed", "train.optimizer": "sgd"},
          "runs": [
            {"label": "batch 64", "set": {"train.batch_size": 64}},
            {"label": "4 x 16", "set": {"train.batch_size": 16, "train.accumulation": 4}}
          ],
          "claims": [{"metric": "activations", "smaller": "4 x 16", "than": "batch 64", "at_most": 0.6},
                     {"run": "batch 64", "status": "completed"}]})");
        QVERIFY(QDir(m_broken.path()).mkpath(QStringLiteral("lessons")));
        write(m_broken.filePath("lessons/broken.json"), R"({"title": "Broken", "explanation": "e",
          "runs": [{"label": "bad", "set": {"train.batchsize": 4}}, {"label": "good"}]})");
    }

    void aBrokenLessonFileIsNamedInTheMenu() {
        qputenv("OOMLAB_RESOURCE_DIR", m_broken.path().toUtf8());
        const LessonCatalog catalog = loadLessonCatalog();
        QVERIFY(catalog.error.contains(QStringLiteral("broken.json")));
        QVERIFY(catalog.error.contains(QStringLiteral("train.batch_size")));  // did you mean
        MainWindow window(test::windowOptions(m_broken.filePath("runs.sqlite")));
        const QStringList texts = menuTexts(window.menus()->lessonsMenu());
        QVERIFY(std::any_of(texts.begin(), texts.end(),
                            [](const QString& text) { return text.contains("broken.json"); }));
    }

    void runningALessonEndsInTheCompareViewWithItsChecks() {
        qputenv("OOMLAB_RESOURCE_DIR", m_good.path().toUtf8());
        const LessonCatalog catalog = loadLessonCatalog();
        QVERIFY2(catalog.error.isEmpty(), qPrintable(catalog.error));
        QCOMPARE(int(catalog.lessons.size()), 1);
        const Lesson& lesson = catalog.lessons.front();
        QVERIFY(lessonHtml(lesson).contains(QStringLiteral("train.accumulation=4")));

        MainWindow window(test::windowOptions(m_good.filePath("runs.sqlite")));
        window.show();
        QVERIFY(menuTexts(window.menus()->lessonsMenu())
                    .contains(QStringLiteral("Gradient accumulation")));

        // The user's experiment, which the lesson must leave as it is.
        ExperimentConfig mine = test::tinyConfig(7);
        mine.train.batch_size = 77;
        window.experimentPanel()->setConfig(mine);
        const std::string before = config_to_json(window.experimentPanel()->config());

        QSignalSpy created(window.controller(), &RunController::runCreated);
        QSignalSpy finished(window.controller(), &RunController::lessonFinished);
        QSignalSpy loaded(window.comparePage(), &ComparePage::loaded);
        window.runLesson(lesson);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 90000);
        const LessonEnd end = finished.at(0).at(0).value<LessonEnd>();
        QVERIFY2(end.error.isEmpty(), qPrintable(end.error));
        QVERIFY(end.completed);
        QCOMPARE(end.runIds.size(), 2);
        QCOMPARE(created.count(), 2);  // both runs went through the live page
        QCOMPARE(window.livePage()->currentRunId(), end.runIds.back());
        QCOMPARE(end.checks.size(), 2);
        QCOMPARE(end.holds, (QVector<bool>{true, true}));

        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 20000);
        ComparePage* compare = window.comparePage();
        QCOMPARE(compare->runs().size(), 2);
        QCOMPARE(QString::fromStdString(compare->runs()[1].record.name),
                 QStringLiteral("accumulation: 4 x 16"));
        QCOMPARE(compare->runs()[1].record.outcome.steps, std::int64_t(4));
        QVERIFY(compare->note().contains(QStringLiteral("✓")));
        QVERIFY(compare->note().contains(QStringLiteral("activations")));
        QCOMPARE(config_to_json(window.experimentPanel()->config()), before);
    }

    // A lesson trains a few steps a run; paced, it lasts long enough to be watched.
    void aPacedLessonLastsLongEnoughToWatch() {
        for (const std::int64_t steps : {4, 8, 20, 60}) {
            QVERIFY(RunController::lessonStepPauseMs(RunController::Pace::Watchable, steps) *
                        steps >=
                    5000);
            QVERIFY(RunController::lessonStepPauseMs(RunController::Pace::Slow, steps) * steps >=
                    RunController::lessonStepPauseMs(RunController::Pace::Watchable, steps) *
                        steps);
            QCOMPARE(RunController::lessonStepPauseMs(RunController::Pace::Full, steps), 0);
        }
        // A long lesson is paced as any run.
        QCOMPARE(RunController::lessonStepPauseMs(RunController::Pace::Watchable, 100000),
                 RunController::stepPauseMs(RunController::Pace::Watchable));
    }

    // The flow a class goes through: explain, predict, run (paced), reveal each claim.
    void theLessonFlowRevealsEachClaimBesideThePrediction() {
        qputenv("OOMLAB_RESOURCE_DIR", m_good.path().toUtf8());
        const Lesson lesson = loadLessonCatalog().lessons.front();
        MainWindow window(test::windowOptions(m_good.filePath("flow.sqlite")));
        window.show();
        window.experimentPanel()->setConfig(test::tinyConfig(5));
        const std::string before = config_to_json(window.experimentPanel()->config());

        LessonFlow* flow = window.openLesson(lesson);
        QCOMPARE(flow->page(), int(LessonFlow::ExplainPage));
        // Before the prediction: the runs and their settings, never the answer (the
        // explanation or a claim).
        const QString setup = flow->findChild<QTextBrowser*>()->toPlainText();
        QVERIFY2(setup.contains(QStringLiteral("train.accumulation=4")), qPrintable(setup));
        QVERIFY2(!setup.contains(QStringLiteral("A fraction of the activations")),
                 qPrintable(setup));
        QVERIFY2(!setup.contains(qs(describe_claim(lesson.claims.front()))), qPrintable(setup));
        // The pace chosen for the last lesson is kept.
        auto* pace = flow->findChild<QComboBox*>(QStringLiteral("lessonPace"));
        QVERIFY(pace);
        QCOMPARE(pace->currentData().toInt(), int(RunController::Pace::Watchable));
        pace->setCurrentIndex(pace->findData(int(RunController::Pace::Full)));
        flow->next();
        QCOMPARE(flow->page(), int(LessonFlow::PredictPage));
        flow->predict(0, 0);  // "batch 64 needs the most, by less than 1.5 times"
        flow->next();
        QCOMPARE(flow->page(), int(LessonFlow::RunPage));
        QSignalSpy finished(window.controller(), &RunController::lessonFinished);
        auto* start = flow->findChild<QPushButton*>(QStringLiteral("runLesson"));
        QVERIFY(start);
        QTest::mouseClick(start, Qt::LeftButton);
        QVERIFY(!flow->isVisible());  // the plots behind it are watched while it trains
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 120000);
        QCOMPARE(flow->page(), int(LessonFlow::RevealPage));
        QVERIFY(flow->isVisible());
        QCOMPARE(window.controller()->pace(), RunController::Pace::Full);  // restored
        QVERIFY2(flow->revealText().contains(QStringLiteral("Measured")),
                 qPrintable(flow->revealText()));
        QVERIFY(flow->revealText().contains(QStringLiteral("batch 64")));
        QCOMPARE(flow->revealed(), 0);
        // The comparison behind the lesson's window waits for the claims too.
        QVERIFY(!window.comparePage()->note().contains(QStringLiteral("✓")));
        QVERIFY(!flow->revealText().contains(QStringLiteral("A fraction of the activations")));
        QVERIFY(flow->revealNext());
        QVERIFY(flow->revealText().contains(QStringLiteral("✓")));
        QVERIFY(flow->revealNext());
        QVERIFY(!flow->revealNext());  // two claims
        QVERIFY(window.comparePage()->note().contains(QStringLiteral("✓")));
        // With every claim out, the why.
        QVERIFY2(flow->revealText().contains(QStringLiteral("A fraction of the activations")),
                 qPrintable(flow->revealText()));
        QCOMPARE(config_to_json(window.experimentPanel()->config()), before);
        LessonFlow* again = window.openLesson(lesson);
        QCOMPARE(again->findChild<QComboBox*>(QStringLiteral("lessonPace"))->currentData().toInt(),
                 int(RunController::Pace::Full));
    }
};

OOMLAB_UI_TEST_MAIN(LessonTest)
#include "lesson_test.moc"
