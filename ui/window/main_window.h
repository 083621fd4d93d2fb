// The main window only wires the pages together: the experiment panel (a dock), the live,
// runs and compare pages (tabs), the status bar's progress, and the menus.
#pragma once

#include <QFont>
#include <QMainWindow>
#include <QPointer>
#include <QVector>

#include <optional>

#include "lessons/lesson_flow.h"
#include "live/run_controller.h"
#include "oomlab/config/experiment_config.h"
#include "oomlab/lessons/lesson.h"

class QTabWidget;

class QDockWidget;

namespace oomlab::ui {

class ComparePage;
class ExperimentPanel;
class LivePage;
class MainMenus;
class RunController;
class RunDatabase;
class RunsPage;
class StatusProgress;
struct LessonEnd;
struct RunEnd;

struct MainWindowOptions {
    QString databasePath;                    // empty: the last one used, else the default
    std::optional<ExperimentConfig> config;  // empty: the last one used, else the defaults
    bool restoreSession = true;              // window layout and last config from QSettings
};

class MainWindow : public QMainWindow {
    Q_OBJECT

public:
    enum Page { LiveTab, RunsTab, CompareTab };

    explicit MainWindow(const MainWindowOptions& options = {}, QWidget* parent = nullptr);
    ~MainWindow() override;

    ExperimentPanel* experimentPanel() const { return m_panel; }
    LivePage* livePage() const { return m_live; }
    RunsPage* runsPage() const { return m_runs; }
    ComparePage* comparePage() const { return m_compare; }
    RunController* controller() const { return m_controller; }
    RunDatabase* database() const { return m_database; }
    StatusProgress* statusProgress() const { return m_progress; }
    MainMenus* menus() const { return m_menus; }
    QTabWidget* tabs() const { return m_tabs; }
    void showPage(Page page);

    // Starts the panel's experiment; false when the settings are invalid or a run is going.
    bool startRun();
    void stopRun();
    bool rerun(const ExperimentConfig& config, const QString& name, int processes = 1);
    // Trains a lesson's runs at `pace`; the panel's experiment is left as it is. Where the
    // runs are sent to a class's MLflow server, each carries the student's `prediction`.
    void runLesson(const Lesson& lesson, RunController::Pace pace = RunController::Pace::Full,
                   const LessonAnswer& prediction = {});
    // The lesson flow (explain, predict, run, reveal) for `lesson`, beside the window.
    LessonFlow* openLesson(const Lesson& lesson);
    LessonFlow* lessonFlow() const { return m_lessonFlow; }
    // Finds the largest batch size under the panel's memory cap and sets it in the panel.
    bool findBatchSize();
    void compareRuns(const QVector<qint64>& runIds);
    // Returns an empty string or the error (also shown to the user unless `quiet`).
    QString openDatabase(const QString& path, bool quiet = false);
    void applyFix(const oomlab::Settings& settings, bool run);

    // The size of all text, 1 = the desktop's: menus, the form, plots, legends, the lesson's
    // reveal. Kept between sessions.
    void setZoom(double factor);
    double zoom() const { return m_zoom; }
    // Presentation mode, for the back of a room: text at 1.6x, lines 2.5 times as wide, the
    // plots given the window (the experiment panel hidden until View → Experiment). Zooming
    // in or out keeps the mode; Actual size goes back to the mode's own zoom. Kept between
    // sessions.
    static constexpr double kPresentationZoom = 1.6;
    void setPresentationMode(bool on);
    bool presentationMode() const { return m_presenting; }
    void resetZoom();

signals:
    void presentationModeChanged(bool on);

public:
    // How fast the user's runs train (View → Training pace), kept between sessions. A first
    // session starts watchable, so the first run's curves move for several seconds.
    void setTrainingPace(RunController::Pace pace);

    // Moves and shrinks the window so that its frame (title bar and borders, which the window
    // manager adds once it is shown) is on the screen's free area; a maximised window is left.
    void fitFrameToScreen();
    // After the text's size changed: the frame moved and shrunk onto the screen's free area
    // where it no longer is.
    void keepFrameOnScreen();
    // The estimator's record over the runs as the Runs page last read them, for the
    // experiment panel's prediction.
    void updateEstimatorRecord();

protected:
    void closeEvent(QCloseEvent* event) override;
    void showEvent(QShowEvent* event) override;

private:
    void wireController();
    void onRunFinished(const RunEnd& end);
    void linkFixRun(qint64 runId);
    void sendWhileTraining(qint64 runId);  // to the class's MLflow server, where one is set
    void onLessonFinished(const LessonEnd& end);
    void restoreSession(const MainWindowOptions& options);
    // Brings the window within its screen's free area (a first start, a geometry saved on a
    // larger screen), keeping its size where it fits.
    void fitScreen();
    void placeFrameWithin(const QRect& available);
    void updateTitle();
    // True when a database is open; else says how to open one (nothing trains without one).
    bool haveDatabase();

    RunDatabase* m_database = nullptr;
    RunController* m_controller = nullptr;
    ExperimentPanel* m_panel = nullptr;
    LivePage* m_live = nullptr;
    RunsPage* m_runs = nullptr;
    ComparePage* m_compare = nullptr;
    QTabWidget* m_tabs = nullptr;
    StatusProgress* m_progress = nullptr;
    MainMenus* m_menus = nullptr;
    QPointer<LessonFlow> m_lessonFlow;
    QFont m_baseFont;
    double m_zoom = 1.0;
    bool m_frameFitted = false;
    QSize m_sizeWhenShown;
    bool m_presenting = false;
    QDockWidget* m_experimentDock = nullptr;
    RunController::Pace m_paceBeforeLesson = RunController::Pace::Full;
    // The lesson training now, for the tags its runs keep (a tracker gets them with each):
    // the student's prediction, and the place in the lesson of the next run made.
    struct PredictedLesson {
        Lesson lesson;
        LessonAnswer prediction;
        std::size_t next = 0;
    };
    std::optional<PredictedLesson> m_predictedLesson;
    // The runs have ended: what was sent while they trained goes on to their end, whatever
    // the target is now; where nothing was, each is sent if every run is.
    void sendRunEnds(const QVector<qint64>& runIds);
    bool m_saveSession = true;
    // A fix offered after an out-of-memory: the run that tries it is named after it and
    // linked to the run it fixes (RunStore::set_fix_of).
    struct FixRun {
        qint64 run = 0;  // the run that ran out of memory
        QString name;    // "<its name> + embeddings.freeze=true"
    };
    qint64 m_lastOomRun = 0;
    FixRun m_appliedFix;  // applied to the form, not yet run
    FixRun m_fixOf;       // the run just started tries it
};

}  // namespace oomlab::ui
