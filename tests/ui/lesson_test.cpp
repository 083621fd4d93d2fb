// Lessons: the loader reads a folder of JSON lessons (and names the file and key of a bad
// one); running a lesson trains its runs one after another and opens the compare view.
#include <QApplication>
#include <QFile>
#include <QMenu>
#include <QTemporaryDir>
#include <QtTest>

#include "compare/compare_page.h"
#include "lessons/lesson_library.h"
#include "live/run_controller.h"
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

}  // namespace

class LessonTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        QVERIFY(QDir(m_dir.path()).mkpath(QStringLiteral("lessons")));
        write(m_dir.filePath("lessons/accumulation.json"), R"({
          "name": "accumulation", "title": "Gradient accumulation",
          "explanation": "Same effective batch.\n\nA fraction of the activations.",
          "runs": [
            {"label": "batch 16", "config": {"device": "cpu", "train": {"max_steps": 4, "batch_size": 16}}},
            {"label": "batch 8 x 2", "config": {"device": "cpu", "train.max_steps": 4,
                                               "train.batch_size": 8, "train.accumulation": 2}}
          ]})");
        write(m_dir.filePath("lessons/broken.json"), R"({"name": "broken", "title": "Broken",
          "runs": [{"label": "bad", "config": {"train.batchsize": 4}}]})");
        qputenv("OOMLAB_LESSONS_DIR", m_dir.filePath("lessons").toUtf8());
    }

    void loaderReadsLessonsAndNamesErrors() {
        QCOMPARE(lessonDirectory(), m_dir.filePath("lessons"));
        const LessonLibrary library = loadLessons(lessonDirectory());
        QCOMPARE(library.lessons.size(), 1);
        const Lesson& lesson = library.lessons.front();
        QCOMPARE(lesson.name, QStringLiteral("accumulation"));
        QCOMPARE(lesson.runs.size(), 2);
        QCOMPARE(lesson.runs[1].config.train.accumulation, 2);
        QCOMPARE(lesson.runs[1].config.train.batch_size, 8);
        QVERIFY(lesson.runs[1].changedKeys.contains(QStringLiteral("train.accumulation=2")));
        QCOMPARE(library.errors.size(), 1);
        QVERIFY(library.errors.front().contains(QStringLiteral("broken.json")));
        QVERIFY(library.errors.front().contains(QStringLiteral("train.batch_size")));  // did you mean
    }

    void runningALessonEndsInTheCompareView() {
        MainWindowOptions options;
        options.databasePath = m_dir.filePath("runs.sqlite");
        options.restoreSession = false;
        MainWindow window(options);
        window.show();
        // The menu lists the lesson by title.
        bool listed = false;
        for (QAction* action : window.menus()->lessonsMenu()->actions()) {
            listed = listed || action->text() == QStringLiteral("Gradient accumulation");
        }
        QVERIFY(listed);

        QSignalSpy queue(window.controller(), &RunController::queueFinished);
        QSignalSpy loaded(window.comparePage(), &ComparePage::loaded);
        window.runLesson(loadLessons(lessonDirectory()).lessons.front());
        QTRY_COMPARE_WITH_TIMEOUT(queue.count(), 1, 60000);
        QCOMPARE(queue.at(0).at(0).value<QVector<qint64>>().size(), 2);
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 20000);
        QCOMPARE(window.comparePage()->runs().size(), 2);
        QCOMPARE(QString::fromStdString(window.comparePage()->runs()[1].record.name),
                 QStringLiteral("accumulation: batch 8 x 2"));
        QCOMPARE(window.comparePage()->runs()[1].record.steps, std::int64_t(4));
    }
};

OOMLAB_UI_TEST_MAIN(LessonTest)
#include "lesson_test.moc"
