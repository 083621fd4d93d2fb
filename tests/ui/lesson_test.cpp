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
#include <QRadioButton>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QtTest>
#include <algorithm>

#include "common/formatting.h"
#include "compare/compare_page.h"
#include "experiment/config_form.h"
#include "experiment/experiment_panel.h"
#include "experiment/key_editor.h"
#include "lessons/lesson_flow.h"
#include "lessons/lesson_text.h"
#include "live/live_page.h"
#include "live/loss_plot.h"
#include "live/memory_plot.h"
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
        QVERIFY2(catalog.error.isEmpty(), qPrintable(catalog.error));  // the folder reads
        QCOMPARE(catalog.broken.size(), 1);
        QVERIFY(catalog.broken[0].contains(QStringLiteral("broken.json")));
        QVERIFY(catalog.broken[0].contains(QStringLiteral("train.batch_size")));  // did you mean
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
        // The first run's loss and step peak stayed on the live plots, under the second's.
        const QString first = QStringLiteral("run %1 (batch 64)").arg(end.runIds.front());
        const EarlierRuns& losses = window.livePage()->lossPlot()->earlierRuns();
        const EarlierRuns& peaks = window.livePage()->memoryPlot()->earlierRuns();
        QCOMPARE(losses.count(), 1);
        QCOMPARE(peaks.count(), 1);
        QCOMPARE(losses.line(0)->name(), first + QStringLiteral(": training loss"));
        QCOMPARE(peaks.line(0)->name(), first + QStringLiteral(": step peak"));
        QCOMPARE(losses.line(0)->dataCount(), 4);
        QCOMPARE(peaks.line(0)->dataCount(), 4);
        QCOMPARE(window.livePage()->lossPlot()->trainLoss()->dataCount(), 4);
        QVERIFY(peaks.line(0)->data()->at(0)->value >
                window.livePage()->memoryPlot()->peak()->data()->at(0)->value);

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

    // Where a run is meant to end out of memory its peak is the cap, not what it needed: the
    // flow asks which runs complete, and not by how much.
    void whereARunIsMeantToRunOutOfMemoryTheFlowAsksWhichCompletes() {
        qputenv("OOMLAB_RESOURCE_DIR", m_good.path().toUtf8());
        Lesson lesson = loadLessonCatalog().lessons.front();
        LessonClaim endsOutOfMemory;
        endsOutOfMemory.kind = LessonClaim::Kind::Status;
        endsOutOfMemory.label = lesson.runs.front().label;
        endsOutOfMemory.status = RunStatus::Oom;
        lesson.claims.push_back(endsOutOfMemory);
        LessonFlow flow(lesson);
        flow.show();
        flow.next();
        QCOMPARE(flow.question(), LessonFlow::Question::WhichCompletes);
        QVERIFY(!flow.asksHowMuch());
        QVERIFY(!flow.asksFreeMemory());  // no claim is about fragmentation
        QVERIFY(!flow.findChild<QComboBox*>(QStringLiteral("predictedFreeMemory"))->isVisible());
        QStringList choices;
        for (QRadioButton* choice : flow.findChildren<QRadioButton*>()) {
            choices << choice->text();
        }
        const QString first = qs(lesson.runs.front().label);
        QVERIFY2(choices.contains(QStringLiteral("only ") + first), qPrintable(choices.join('|')));
        QVERIFY(choices.contains(QStringLiteral("every run")));
        QVERIFY(choices.contains(QStringLiteral("none of them")));
        auto* toRun = flow.findChild<QPushButton*>(QStringLiteral("toRun"));
        QVERIFY(!toRun->isEnabled());
        flow.predict(LessonFlow::kEveryRun, -1);
        QCOMPARE(flow.predictedRun(), LessonFlow::kEveryRun);
        QVERIFY(toRun->isEnabled());
    }

    // The fragmentation lesson asks what it teaches: which run completes under the cap, and
    // why the other fails (its free memory in pieces), each checked against what was measured.
    void theFragmentationQuestionIsCheckedAgainstTheRunsEndings() {
        qputenv("OOMLAB_RESOURCE_DIR", m_good.path().toUtf8());
        Lesson lesson = loadLessonCatalog().lessons.front();
        lesson.runs.resize(2);
        lesson.runs[0].label = "default allocator";
        lesson.runs[1].label = "expandable segments";
        LessonClaim fragmented;
        fragmented.kind = LessonClaim::Kind::Status;
        fragmented.label = lesson.runs[0].label;
        fragmented.status = RunStatus::Oom;
        fragmented.fragmented = true;
        lesson.claims = {fragmented};
        LessonEnd end;
        end.runIds = {1, 2};
        end.runLabels = {QStringLiteral("default allocator"),
                         QStringLiteral("expandable segments")};
        end.peaks = {210 << 20, 189 << 20};
        end.statuses = {RunStatus::Oom, RunStatus::Completed};
        end.steps = {3, 30};
        end.fragmented = {true, false};
        end.completed = true;
        end.checks << QStringLiteral("default allocator ends oom, fragmented");
        end.holds << true;

        const auto verdict = [&](int run, int freeMemory) {
            LessonFlow flow(lesson);
            flow.show();
            flow.next();
            [&] {
                QVERIFY(flow.asksFreeMemory());
                auto* why = flow.findChild<QComboBox*>(QStringLiteral("predictedFreeMemory"));
                QVERIFY(why && why->isVisible());
                QVERIFY(!flow.findChild<QPushButton*>(QStringLiteral("toRun"))->isEnabled());
            }();
            flow.predict(run, freeMemory);
            flow.onLessonFinished(end);
            return flow.revealText();
        };
        const QString right = verdict(1, 1);  // only expandable segments; free, in pieces
        QVERIFY2(right.contains(QStringLiteral("<b>expandable segments</b> completed")),
                 qPrintable(right));
        QVERIFY2(right.contains(QStringLiteral("out of memory at step 4")), qPrintable(right));
        QVERIFY2(right.contains(QStringLiteral("in pieces too small")), qPrintable(right));
        QVERIFY2(right.contains(QStringLiteral(">right<")), qPrintable(right));
        QVERIFY2(verdict(1, 0).contains(QStringLiteral("right about which run, off about why")),
                 qPrintable(verdict(1, 0)));
        QVERIFY(verdict(LessonFlow::kEveryRun, 1)
                    .contains(QStringLiteral("off about which run, right about why")));
        QVERIFY(verdict(0, 0).contains(QStringLiteral(">off<")));
    }

    // Six claims and a long why scroll inside the window, which stays on the screen with its
    // Close button.
    void aLongRevealScrollsInsideTheWindow() {
        qputenv("OOMLAB_RESOURCE_DIR", m_good.path().toUtf8());
        Lesson lesson = loadLessonCatalog().lessons.front();
        for (int i = 0; i < 4; ++i) {
            lesson.explanation += lesson.explanation;
        }
        LessonFlow flow(lesson);
        flow.show();
        QVERIFY(QTest::qWaitForWindowExposed(&flow));
        LessonEnd end;
        end.runIds = {1, 2};
        end.runLabels = {QStringLiteral("a"), QStringLiteral("b")};
        end.peaks = {100 << 20, 300 << 20};
        end.completed = true;
        for (int i = 0; i < 6; ++i) {
            end.checks << QStringLiteral(
                              "the parameters of rank 0 are at most 0.6 x those of "
                              "the replicated run: measured 0.5 (claim %1)")
                              .arg(i);
            end.holds << true;
        }
        flow.onLessonFinished(end);
        while (flow.revealNext()) {
        }
        QApplication::processEvents();
        // The window needs no more room than the screen has (a window manager gives a window
        // at least its minimum size, which a label of this text pushed past the screen).
        const QRect screen = flow.screen()->availableGeometry();
        QVERIFY2(flow.minimumSizeHint().height() <= screen.height(),
                 qPrintable(QStringLiteral("%1 > %2")
                                .arg(flow.minimumSizeHint().height())
                                .arg(screen.height())));
        QVERIFY(flow.frameGeometry().height() <= screen.height());
        // None of the text is cut: what does not fit scrolls.
        auto* reveal = flow.findChild<QLabel*>(QStringLiteral("lessonReveal"));
        QVERIFY(reveal->height() >= reveal->heightForWidth(reveal->width()));
        auto* scroll = flow.findChild<QScrollArea*>(QStringLiteral("lessonRevealScroll"));
        QVERIFY(scroll && scroll->verticalScrollBar()->maximum() > 0);
    }

    // A lesson a lecturer wrote as a file opens from Lessons → Open lesson file… as a built-in
    // one does; a file that is not a lesson is refused naming its line and key.
    void aLessonFileOpensAsABuiltInOne() {
        MainWindow window(test::windowOptions(m_good.filePath("file.sqlite")));
        window.show();
        const QString path = m_good.filePath("mine.json");
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(R"({"title": "My own lesson", "explanation": "Two batch sizes.",
  "base": {"train.max_steps": 2}, "hide": ["model.kind"], "lock": ["train.batch_size"],
  "runs": [{"label": "small", "set": {"train.batch_size": 8}},
           {"label": "large", "set": {"train.batch_size": 64}}]})");
        file.close();
        ConfigForm* form = window.experimentPanel()->form();
        QVERIFY(form->setValue(QStringLiteral("train.batch_size"), QStringLiteral("32")));
        QString error;
        LessonFlow* flow = window.menus()->openLessonFile(path, error);
        QVERIFY2(flow, qPrintable(error));
        QCOMPARE(qs(flow->lesson().title), QStringLiteral("My own lesson"));
        // The lesson dialogs open where this lesson was (they opened at /).
        QCOMPARE(window.menus()->lessonFolder(), QFileInfo(path).absolutePath());
        QCOMPARE(flow->page(), int(LessonFlow::ExplainPage));
        QStringList menu;
        for (const QAction* action : window.menus()->lessonsMenu()->actions()) {
            menu << action->text();
        }
        QVERIFY2(menu.contains(QStringLiteral("Open lesson file…")), qPrintable(menu.join('|')));
        // The lesson's view of the form while it is open: model.kind out of sight,
        // train.batch_size shown but fixed, at the lesson's first run's value (not the user's
        // 32); the whole form again once it is closed, with the user's value.
        KeyEditor* batch = form->editor(QStringLiteral("train.batch_size"));
        QVERIFY(form->editor(QStringLiteral("model.kind"))->isHidden());
        QVERIFY(!batch->isHidden());
        QVERIFY(!batch->isEnabled());
        QCOMPARE(batch->text(), QStringLiteral("8"));
        QVERIFY(form->editor(QStringLiteral("train.max_steps"))->isEnabled());
        flow->close();
        QVERIFY(!form->editor(QStringLiteral("model.kind"))->isHidden());
        QVERIFY(batch->isEnabled());
        QCOMPARE(batch->text(), QStringLiteral("32"));
        QCOMPARE(form->config().train.batch_size, 32);

        QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
        file.write(
            "{\"title\": \"t\", \"explanation\": \"e\",\n"
            "  \"runs\": [{\"label\": \"a\"},\n"
            "           {\"label\": \"b\", \"set\": {\"train.batchsize\": 8}}]}");
        file.close();
        QVERIFY(!window.menus()->openLessonFile(path, error));
        QVERIFY2(error.contains(path + QStringLiteral(":3: runs[1].set: unknown config key")),
                 qPrintable(error));
    }

    // A built-in lesson's locked setting shows what its runs train with: the quantized
    // embeddings lesson trains its table frozen, though the user's form fine-tunes it.
    void aLockedSettingShowsTheLessonsValue() {
        MainWindow window(test::windowOptions(m_good.filePath("locked.sqlite")));
        window.show();
        ConfigForm* form = window.experimentPanel()->form();
        QVERIFY(form->setValue(QStringLiteral("embeddings.trainable"), QStringLiteral("true")));
        qunsetenv("OOMLAB_RESOURCE_DIR");  // the built-in lessons
        const LessonCatalog catalog = loadLessonCatalog();
        const auto quantized = std::find_if(
            catalog.lessons.begin(), catalog.lessons.end(),
            [](const Lesson& lesson) { return lesson.name == "quantized-embeddings"; });
        QVERIFY(quantized != catalog.lessons.end());
        LessonFlow* flow = window.openLesson(*quantized);
        KeyEditor* trainable = form->editor(QStringLiteral("embeddings.trainable"));
        QVERIFY(!trainable->isEnabled());
        QCOMPARE(trainable->text(), QStringLiteral("false"));
        QVERIFY2(form->config().embeddings.trainable, "the user's own settings are kept");
        flow->close();
        QCOMPARE(trainable->text(), QStringLiteral("true"));
    }

    // Two runs compared, saved as a lesson: the draft opens as a lesson of those two runs,
    // with a claim of the peaks they measured.
    void theComparedRunsAreSavedAsALesson() {
        MainWindow window(test::windowOptions(m_good.filePath("draft.sqlite")));
        window.show();
        QVector<qint64> ids;
        for (const int batch : {4, 32}) {
            ExperimentConfig config = test::tinyConfig(3);
            config.train.batch_size = batch;
            window.experimentPanel()->setConfig(config);
            ids << test::runAndWait(window).runId;
        }
        QSignalSpy loaded(window.comparePage(), &ComparePage::loaded);
        window.compareRuns(ids);
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 30000);
        const QString path = m_good.filePath("draft.json");
        QCOMPARE(window.menus()->saveAsLesson(path), QString());
        QString error;
        LessonFlow* flow = window.menus()->openLessonFile(path, error);
        QVERIFY2(flow, qPrintable(error));
        QCOMPARE(flow->lesson().runs.size(), std::size_t(2));
        QCOMPARE(flow->lesson().claims.size(), std::size_t(1));  // the peaks; both completed
        QCOMPARE(qs(flow->lesson().claims[0].metric), QStringLiteral("peak_bytes"));
        flow->close();
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
        // Counted in English, never "run(s)".
        QVERIFY2(setup.contains(QStringLiteral("The lesson trains %1 runs, one after another")
                                    .arg(lesson.runs.size())),
                 qPrintable(setup));
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
        // Nothing is chosen for the class: the way on waits for a whole prediction.
        auto* toRun = flow->findChild<QPushButton*>(QStringLiteral("toRun"));
        QVERIFY(toRun && !toRun->isEnabled());
        QCOMPARE(flow->predictedRun(), LessonFlow::kNotChosen);
        QCOMPARE(flow->predictedBand(), -1);
        QVERIFY(flow->asksHowMuch());
        flow->predict(0, -1);
        QVERIFY(!toRun->isEnabled());  // which run, but not yet by how much
        flow->predict(0, 0);           // "batch 64 needs the most, by less than 1.5 times"
        QVERIFY(toRun->isEnabled());
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
        // Runs compared after the lesson get no lesson header, even once its window closes.
        QSignalSpy loaded(window.comparePage(), &ComparePage::loaded);
        window.compareRuns({window.livePage()->currentRunId()});
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 20000);
        QVERIFY(window.comparePage()->note().isEmpty());
        flow->close();
        QVERIFY(window.comparePage()->note().isEmpty());
        LessonFlow* again = window.openLesson(lesson);
        QCOMPARE(again->findChild<QComboBox*>(QStringLiteral("lessonPace"))->currentData().toInt(),
                 int(RunController::Pace::Full));
    }
};

OOMLAB_UI_TEST(LessonTest)
#include "lesson_test.moc"
