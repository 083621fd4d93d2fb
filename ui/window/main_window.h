// The main window only wires the pages together: the experiment panel (a dock), the live,
// runs and compare pages (tabs), the status bar's progress, and the menus.
#pragma once

#include <QMainWindow>
#include <QVector>

#include <optional>

#include "oomlab/config/experiment_config.h"
#include "oomlab/lessons/lesson.h"

class QTabWidget;

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
    bool rerun(const ExperimentConfig& config, const QString& name);
    void runLesson(const Lesson& lesson);
    // Finds the largest batch size under the panel's memory cap and sets it in the panel.
    bool findBatchSize();
    void compareRuns(const QVector<qint64>& runIds);
    // Returns an empty string or the error (also shown to the user unless `quiet`).
    QString openDatabase(const QString& path, bool quiet = false);
    void applyFix(const oomlab::Settings& settings, bool run);

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    void wireController();
    void onRunFinished(const RunEnd& end);
    void onLessonFinished(const LessonEnd& end);
    void restoreSession(const MainWindowOptions& options);
    void updateTitle();

    RunDatabase* m_database = nullptr;
    RunController* m_controller = nullptr;
    ExperimentPanel* m_panel = nullptr;
    LivePage* m_live = nullptr;
    RunsPage* m_runs = nullptr;
    ComparePage* m_compare = nullptr;
    QTabWidget* m_tabs = nullptr;
    StatusProgress* m_progress = nullptr;
    MainMenus* m_menus = nullptr;
    bool m_saveSession = true;
};

}  // namespace oomlab::ui
