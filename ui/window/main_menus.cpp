#include "window/main_menus.h"

#include <QActionGroup>
#include <QApplication>
#include <QDesktopServices>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenuBar>
#include <QMessageBox>
#include <QSignalBlocker>
#include <QStatusBar>
#include <QToolBar>
#include <QUrl>

#include "common/app_settings.h"
#include "common/formatting.h"
#include "compare/compare_data.h"
#include "compare/compare_page.h"
#include "experiment/experiment_panel.h"
#include "export/run_export.h"
#include "lessons/lesson_text.h"
#include "live/run_controller.h"
#include "oomlab/common/version.h"
#include "oomlab/config/config_io.h"
#include "oomlab/lessons/lesson.h"
#include "plots/plot_export.h"
#include "plots/themed_plot.h"
#include "runs/class_window.h"
#include "runs/run_database.h"
#include "runs/runs_page.h"
#include "snapshot/oom_message_window.h"
#include "snapshot/snapshot_window.h"
#include "window/main_window.h"
#include "window/status_progress.h"

namespace oomlab::ui {
namespace {

// Where a file dialog opens: the folder last used for its kind of file ("lessons", "export"),
// else the home folder (an empty folder put "/lesson.json" at the root).
QString lastDir(const QString& kind = QStringLiteral("export")) {
    const QString dir = AppSettings::value(kind + QStringLiteral("/lastDir")).toString();
    return !dir.isEmpty() && QFileInfo(dir).isDir() ? dir : QDir::homePath();
}

void rememberDir(const QString& path, const QString& kind = QStringLiteral("export")) {
    AppSettings::setValue(kind + QStringLiteral("/lastDir"), QFileInfo(path).absolutePath());
}

constexpr QLatin1String kLessons("lessons");

// Each key once: on Linux QKeySequence::ZoomOut is Ctrl+-, and an action that has a key twice
// makes Qt refuse it as ambiguous (the key then does nothing).
QList<QKeySequence> distinctKeys(const QList<QKeySequence>& keys) {
    QList<QKeySequence> distinct;
    for (const QKeySequence& key : keys) {
        if (!key.isEmpty() && !distinct.contains(key)) {
            distinct.append(key);
        }
    }
    return distinct;
}

}  // namespace

MainMenus::MainMenus(MainWindow* window) : QObject(window), m_window(window) {
    buildFileMenu();
    buildRunMenu();
    buildViewMenu();
    m_lessons = m_window->menuBar()->addMenu(tr("&Lessons"));
    m_lessons->setObjectName(QStringLiteral("lessonsMenu"));
    reloadLessons();
    buildHelpMenu();
}

void MainMenus::buildFileMenu() {
    QMenu* file = m_window->menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open or create database…"), QKeySequence::Open, this,
                    &MainMenus::openDatabaseDialog);
    m_recent = file->addMenu(tr("&Recent databases"));
    file->addSeparator();
    file->addAction(tr("Open memory &snapshot…"), this, &MainMenus::openSnapshotDialog);
    file->addAction(tr("E&xplain an out-of-memory message…"), this,
                    &MainMenus::openOomMessageWindow);
    file->addSeparator();
    file->addAction(tr("&Load config…"), this, &MainMenus::loadConfigDialog);
    file->addAction(tr("&Save config as…"), QKeySequence::Save, this, &MainMenus::saveConfigDialog);
    file->addAction(tr("Reset settings to &defaults"), this,
                    [this] { m_window->experimentPanel()->setConfig(ExperimentConfig()); });
    file->addSeparator();
    QMenu* plots = file->addMenu(tr("Export &plot"));
    const QList<QPair<QString, QString>> names = {
        {tr("Live: loss and accuracy"), QStringLiteral("lossPlot")},
        {tr("Live: memory"), QStringLiteral("memoryPlot")},
        {tr("Live: memory by phase"), QStringLiteral("phasePlot")},
        {tr("Compare: loss"), QStringLiteral("compareLossPlot")},
        {tr("Compare: memory"), QStringLiteral("compareMemoryPlot")},
        {tr("Compare: peak breakdown"), QStringLiteral("compareBreakdown")},
        {tr("Predicted breakdown"), QStringLiteral("predictedBreakdown")}};
    for (const auto& [title, objectName] : names) {
        const QString name = objectName;
        plots->addAction(title, this, [this, name] { exportPlotDialog(name); });
    }
    file->addAction(tr("Export selected &runs…"), this,
                    [this] { m_window->runsPage()->exportSelected(); });
    file->addAction(tr("Send selected runs to a &tracker…"), this,
                    [this] { m_window->runsPage()->sendSelected(); });
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, m_window, &QWidget::close);
}

void MainMenus::buildRunMenu() {
    QMenu* run = m_window->menuBar()->addMenu(tr("&Run"));
    m_run = run->addAction(tr("&Run"), m_window, &MainWindow::startRun);
    m_run->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    m_run->setObjectName(QStringLiteral("runAction"));
    m_stop = run->addAction(tr("&Stop"), m_window, &MainWindow::stopRun);
    m_stop->setShortcut(QKeySequence(Qt::Key_Escape));
    m_stop->setObjectName(QStringLiteral("stopAction"));
    m_stop->setEnabled(false);
    // Pause holds the run after its current step; Step trains one more (with no run, it
    // starts one and holds it after its first step), its phases drawn as they come.
    RunController* controller = m_window->controller();
    m_pause = run->addAction(tr("&Pause"));
    m_pause->setObjectName(QStringLiteral("pauseAction"));
    m_pause->setCheckable(true);
    m_pause->setShortcut(QKeySequence(Qt::Key_F6));
    m_pause->setStatusTip(tr("Hold the run after its current step; again to go on"));
    m_pause->setEnabled(false);
    connect(m_pause, &QAction::toggled, controller, &RunController::setHeld);
    m_step = run->addAction(tr("S&tep"));
    m_step->setObjectName(QStringLiteral("stepAction"));
    m_step->setShortcut(QKeySequence(Qt::Key_F10));
    m_step->setStatusTip(tr("Train one optimizer step, then hold"));
    connect(m_step, &QAction::triggered, this, [this, controller] {
        if (controller->isRunning()) {
            controller->setHeld(true);
            controller->step();
        } else if (m_run->isEnabled()) {
            controller->setHeld(true);
            m_window->startRun();
        }
    });
    connect(controller, &RunController::heldChanged, this, [this](bool held) {
        const QSignalBlocker quiet(m_pause);
        m_pause->setChecked(held);
        // In the run's own indicator: a message beside it ran under it ("Step (F10Training").
        m_window->statusProgress()->setHeld(held);
    });
    run->addSeparator();
    QAction* search = run->addAction(tr("Find the largest &batch size under the cap"), m_window,
                                     &MainWindow::findBatchSize);
    search->setStatusTip(tr("Short trial runs from the estimator's answer; sets train.batch_size"));
    run->addSeparator();
    run->addAction(tr("Re-run the selected run"), m_window->runsPage(), &RunsPage::rerunSelected);
    run->addAction(tr("Compare the selected runs"), m_window->runsPage(),
                   &RunsPage::compareSelected);

    QToolBar* toolbar = m_window->addToolBar(tr("Run"));
    toolbar->setObjectName(QStringLiteral("runToolbar"));
    toolbar->addAction(m_run);
    toolbar->addAction(m_pause);
    toolbar->addAction(m_step);
    toolbar->addAction(m_stop);
    connect(controller, &RunController::runningChanged, this, [this, controller](bool running) {
        m_run->setEnabled(!running && m_window->experimentPanel()->isValid());
        m_stop->setEnabled(running);
        m_pause->setEnabled(controller->canHold());
        m_step->setEnabled(running ? controller->canHold() : m_run->isEnabled());
    });
    connect(m_window->experimentPanel(), &ExperimentPanel::validityChanged, this,
            [this](bool valid) {
                m_run->setEnabled(valid && !m_window->controller()->isRunning());
                m_step->setEnabled(m_window->controller()->isRunning()
                                       ? m_window->controller()->canHold()
                                       : m_run->isEnabled());
            });
}

void MainMenus::buildViewMenu() {
    QMenu* view = m_window->menuBar()->addMenu(tr("&View"));
    const QStringList pages = {tr("&Live"), tr("R&uns"), tr("&Compare")};
    for (int i = 0; i < pages.size(); ++i) {
        QAction* action = view->addAction(
            pages[i], this, [this, i] { m_window->showPage(static_cast<MainWindow::Page>(i)); });
        action->setShortcut(QKeySequence(Qt::CTRL | (Qt::Key_1 + i)));
    }
    view->addSeparator();
    if (auto* dock = m_window->findChild<QDockWidget*>(QStringLiteral("experimentDock"))) {
        QAction* experiment = dock->toggleViewAction();
        experiment->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
        view->addAction(experiment);
    }
    view->addSeparator();
    QAction* zoomIn = view->addAction(tr("Zoom &in"), this,
                                      [this] { m_window->setZoom(m_window->zoom() * 1.15); });
    zoomIn->setShortcuts(
        distinctKeys({QKeySequence(Qt::CTRL | Qt::Key_Equal), QKeySequence::ZoomIn}));
    QAction* zoomOut = view->addAction(tr("Zoom &out"), this,
                                       [this] { m_window->setZoom(m_window->zoom() / 1.15); });
    zoomOut->setShortcuts(
        distinctKeys({QKeySequence(Qt::CTRL | Qt::Key_Minus), QKeySequence::ZoomOut}));
    view->addAction(tr("&Actual size"), QKeySequence(Qt::CTRL | Qt::Key_0), m_window,
                    &MainWindow::resetZoom);
    QAction* presentation = view->addAction(tr("&Presentation mode"));
    presentation->setObjectName(QStringLiteral("presentationMode"));
    presentation->setCheckable(true);
    presentation->setChecked(m_window->presentationMode());
    presentation->setShortcut(QKeySequence(Qt::Key_F5));
    presentation->setStatusTip(
        tr("Large text in the form, the plots, legends and lessons, for "
           "a projector"));
    connect(presentation, &QAction::toggled, m_window, &MainWindow::setPresentationMode);
    connect(m_window, &MainWindow::presentationModeChanged, presentation, [presentation](bool on) {
        const QSignalBlocker quiet(presentation);
        presentation->setChecked(on);
    });
    view->addSeparator();
    QMenu* pace = view->addMenu(tr("Training &pace"));
    const QList<QPair<QString, RunController::Pace>> paces = {
        {tr("Full speed"), RunController::Pace::Full},
        {tr("Watchable (about 40 steps a second)"), RunController::Pace::Watchable},
        {tr("Slow (about 8 steps a second)"), RunController::Pace::Slow}};
    auto* paceGroup = new QActionGroup(pace);
    for (const auto& [text, value] : paces) {
        QAction* action = pace->addAction(
            text, this, [this, value = value] { m_window->setTrainingPace(value); });
        action->setCheckable(true);
        action->setData(int(value));
        paceGroup->addAction(action);
    }
    // A lesson changes the pace for its runs: show the one in force.
    connect(pace, &QMenu::aboutToShow, this, [this, paceGroup] {
        for (QAction* action : paceGroup->actions()) {
            action->setChecked(action->data().toInt() == int(m_window->controller()->pace()));
        }
    });
}

void MainMenus::buildHelpMenu() {
    QMenu* help = m_window->menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About OOM Lab"), this, [this] {
        QMessageBox::about(
            m_window, tr("About OOM Lab"),
            tr("<b>OOM Lab %1</b><p>A workbench for understanding GPU out-of-memory errors: "
               "change memory settings, predict the breakdown, train, watch loss and memory, "
               "compare runs.</p><p>Headless: <code>oomlab-cli</code> (same engine, same "
               "database).</p>")
                .arg(qs(engine_version())));
    });
    help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);
}

void MainMenus::updateRecentDatabases() {
    m_recent->clear();
    for (const QString& path : AppSettings::recentDatabases()) {
        m_recent->addAction(path, this, [this, path] { m_window->openDatabase(path); });
    }
    m_recent->setEnabled(!m_recent->isEmpty());
}

void MainMenus::reloadLessons() {
    m_lessons->clear();
    const LessonCatalog catalog = loadLessonCatalog();
    for (const Lesson& lesson : catalog.lessons) {
        QAction* action = m_lessons->addAction(qs(lesson.title), this,
                                               [this, lesson] { m_window->openLesson(lesson); });
        action->setData(qs(lesson.name));
        action->setStatusTip(qs(lesson.explanation).section(QLatin1Char('.'), 0, 0));
    }
    for (const QString& why : catalog.broken) {  // named, the others still there
        m_lessons->addAction(tr("⚠ %1").arg(why))->setEnabled(false);
    }
    if (!catalog.error.isEmpty()) {
        m_lessons->addAction(tr("⚠ %1").arg(catalog.error))->setEnabled(false);
    } else if (catalog.lessons.empty() && catalog.broken.isEmpty()) {
        m_lessons->addAction(tr("No lessons in %1").arg(catalog.folder))->setEnabled(false);
    }
    m_lessons->addSeparator();
    m_lessons->addAction(tr("Open lesson file…"), this, &MainMenus::openLessonFileDialog);
    m_lessons->addAction(tr("Save the compared runs as a lesson…"), this,
                         &MainMenus::saveAsLessonDialog);
    m_lessons->addAction(tr("Reload lessons"), this, &MainMenus::reloadLessons);
    m_lessons->addSeparator();
    m_lessons->addAction(tr("Follow a class on MLflow…"), this, &MainMenus::openClassWindow);
}

ClassWindow* MainMenus::openClassWindow() {
    if (!m_class) {
        m_class = new ClassWindow(m_window->database(), m_window);
        m_class->setAttribute(Qt::WA_DeleteOnClose);
        connect(m_class, &ClassWindow::compareRequested, m_window,
                [this](const QVector<qint64>& ids) {
                    m_window->compareRuns(ids);
                    m_window->showPage(MainWindow::CompareTab);
                    m_window->raise();
                });
        m_class->resize(m_class->sizeHint().expandedTo(QSize(640, 420)));
    }
    m_class->show();
    m_class->raise();
    return m_class;
}

void MainMenus::openDatabaseDialog() {
    const QString path = QFileDialog::getSaveFileName(
        m_window, tr("Open or create a run database"), m_window->database()->path(),
        tr("Run databases (*.sqlite *.db);;All files (*)"), nullptr,
        QFileDialog::DontConfirmOverwrite);
    if (!path.isEmpty()) {
        m_window->openDatabase(path);
    }
}

void MainMenus::openSnapshotDialog() {
    const QString path = QFileDialog::getOpenFileName(
        m_window, tr("Open a memory snapshot of PyTorch"), lastDir(), snapshotFileFilter());
    if (!path.isEmpty()) {
        rememberDir(path);
        openSnapshot(path);
    }
}

SnapshotWindow* MainMenus::openSnapshot(const QString& path) {
    auto* window = new SnapshotWindow(m_window);
    connect(window, &SnapshotWindow::experimentRequested, this,
            [this](const QString& json, const QString& source) {
                try {
                    m_window->experimentPanel()->setConfig(
                        parse_config_json(ss(json), "the experiment of " + ss(source)));
                } catch (const std::exception& error) {
                    QMessageBox::warning(m_window, tr("Load the experiment"), qs(error.what()));
                    return;
                }
                m_window->show();  // hidden where the snapshot was opened alone
                m_window->raise();
                m_window->activateWindow();
                m_window->statusBar()->showMessage(
                    tr("Loaded the experiment that recorded %1").arg(source), 5000);
            });
    window->open(path);
    window->show();
    return window;
}

OomMessageWindow* MainMenus::openOomMessageWindow() {
    auto* window = new OomMessageWindow(m_window);
    window->show();
    return window;
}

void MainMenus::openLessonFileDialog() {
    const QString path = QFileDialog::getOpenFileName(
        m_window, tr("Open lesson file"), lessonFolder(), tr("Lessons (*.json);;All files (*)"));
    if (path.isEmpty()) {
        return;
    }
    QString error;
    if (!openLessonFile(path, error)) {
        QMessageBox::warning(m_window, tr("Open lesson file"), error);
    }
}

QString MainMenus::lessonFolder() const {
    return lastDir(kLessons);
}

LessonFlow* MainMenus::openLessonFile(const QString& path, QString& error) {
    try {
        const Lesson lesson = load_lesson_file(ss(path));
        rememberDir(path, kLessons);
        return m_window->openLesson(lesson);
    } catch (const std::exception& refused) {
        error = qs(refused.what());
        return nullptr;
    }
}

void MainMenus::saveAsLessonDialog() {
    if (m_window->comparePage()->runs().size() < 2) {
        QMessageBox::information(m_window, tr("Save as lesson"),
                                 tr("A lesson is drafted from the runs on the Compare page: "
                                    "select two or more runs on the Runs page and compare them "
                                    "first."));
        return;
    }
    const QString path = QFileDialog::getSaveFileName(
        m_window, tr("Save as lesson"),
        QDir(lessonFolder()).filePath(QStringLiteral("new.lesson.json")), tr("Lessons (*.json)"));
    if (path.isEmpty()) {
        return;
    }
    if (const QString error = saveAsLesson(path); !error.isEmpty()) {
        QMessageBox::warning(m_window, tr("Save as lesson"), error);
        return;
    }
    m_window->statusBar()->showMessage(
        tr("Saved %1: write its title and explanation, then Lessons → Open lesson file…").arg(path),
        10000);
}

QString MainMenus::saveAsLesson(const QString& path) {
    std::vector<RunRecord> runs;
    for (const CompareRun& run : m_window->comparePage()->runs()) {
        runs.push_back(run.record);
    }
    if (runs.size() < 2) {
        return tr("compare two or more runs first");
    }
    try {
        const QString error = writeTextFile(path, lesson_from_runs(runs));
        if (error.isEmpty()) {
            rememberDir(path, kLessons);
        }
        return error;
    } catch (const std::exception& error) {  // a run's config that no longer reads
        return qs(error.what());
    }
}

void MainMenus::loadConfigDialog() {
    const QString path = QFileDialog::getOpenFileName(m_window, tr("Load config"), lastDir(),
                                                      tr("Configs (*.json);;All files (*)"));
    if (path.isEmpty()) {
        return;
    }
    rememberDir(path);
    ExperimentConfig config;
    QString error;
    if (!loadConfigFile(path, config, error)) {
        QMessageBox::warning(m_window, tr("Load config"), error);
        return;
    }
    m_window->experimentPanel()->setConfig(config);
    m_window->statusBar()->showMessage(tr("Loaded %1").arg(path), 5000);
}

void MainMenus::saveConfigDialog() {
    const QString path = QFileDialog::getSaveFileName(m_window, tr("Save config"), lastDir(),
                                                      tr("Configs (*.json)"));
    if (path.isEmpty()) {
        return;
    }
    rememberDir(path);
    const QString error = saveConfigFile(m_window->experimentPanel()->config(), path);
    if (!error.isEmpty()) {
        QMessageBox::warning(m_window, tr("Save config"), error);
    }
}

void MainMenus::exportPlotDialog(const QString& plotObjectName) {
    auto* plot = m_window->findChild<ThemedPlot*>(plotObjectName);
    if (!plot) {
        return;
    }
    const QString start = QDir(lastDir()).filePath(plot->suggestedFileName());
    const QString path =
        QFileDialog::getSaveFileName(m_window, tr("Export plot"), start, plotFileFilters());
    if (path.isEmpty()) {
        return;
    }
    rememberDir(path);
    const QString error = plot->exportImage(path);
    if (!error.isEmpty()) {
        QMessageBox::warning(m_window, tr("Export plot"), error);
    }
}

}  // namespace oomlab::ui
