// The menu bar and toolbar: File (databases, configs, memory snapshots, out-of-memory messages,
// exports), Run, View, Lessons, Help.
#pragma once

#include <QObject>
#include <QPointer>

class QAction;
class QMenu;

namespace oomlab::ui {

class ClassWindow;
class LessonFlow;
class MainWindow;
class OomMessageWindow;
class SnapshotWindow;

class MainMenus : public QObject {
    Q_OBJECT

public:
    explicit MainMenus(MainWindow* window);

    QAction* runAction() const { return m_run; }
    QAction* stopAction() const { return m_stop; }
    QAction* pauseAction() const { return m_pause; }
    QAction* stepAction() const { return m_step; }
    QMenu* lessonsMenu() const { return m_lessons; }
    void updateRecentDatabases();
    void reloadLessons();

    void openDatabaseDialog();
    void loadConfigDialog();
    void saveConfigDialog();
    void exportPlotDialog(const QString& plotObjectName);
    void openSnapshotDialog();
    void openLessonFileDialog();
    // The lesson written in the file at `path`, opened as a built-in one is; null and the
    // reason (the file, the line, the key) in `error` when it is not a lesson.
    LessonFlow* openLessonFile(const QString& path, QString& error);
    // Where the lesson dialogs open: the folder of the last lesson file opened or saved, else
    // the home folder.
    QString lessonFolder() const;
    void saveAsLessonDialog();
    // The runs on the Compare page drafted as a lesson file at `path` (lesson_from_runs); an
    // empty string, or why not.
    QString saveAsLesson(const QString& path);
    // A window of its own for the memory snapshot at `path`, read on a worker thread.
    SnapshotWindow* openSnapshot(const QString& path);
    // A window to paste an out-of-memory message into (or open a log), explained as it rests.
    OomMessageWindow* openOomMessageWindow();
    // The class's runs from the MLflow server students send to (one window, shown again).
    ClassWindow* openClassWindow();

private:
    void buildFileMenu();
    void buildRunMenu();
    void buildViewMenu();
    void buildHelpMenu();

    MainWindow* m_window;
    QAction* m_run = nullptr;
    QAction* m_stop = nullptr;
    QAction* m_pause = nullptr;
    QAction* m_step = nullptr;
    QMenu* m_recent = nullptr;
    QMenu* m_lessons = nullptr;
    QPointer<ClassWindow> m_class;
};

}  // namespace oomlab::ui
