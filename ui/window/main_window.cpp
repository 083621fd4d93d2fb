#include "window/main_window.h"

#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QMessageBox>
#include <QScreen>
#include <QScrollArea>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>

#include <algorithm>
#include <utility>

#include "common/app_settings.h"
#include "common/formatting.h"
#include "common/run_types.h"
#include "common/tab_sizing.h"
#include "common/zoom_style.h"
#include "compare/compare_page.h"
#include "experiment/config_form.h"
#include "experiment/estimate_view.h"
#include "experiment/experiment_panel.h"
#include "export/tracker_send.h"
#include "lessons/lesson_text.h"
#include "live/live_page.h"
#include "live/run_controller.h"
#include "oomlab/config/config_io.h"
#include "plots/themed_plot.h"
#include "runs/fix_outcome.h"
#include "runs/run_database.h"
#include "runs/runs_model.h"
#include "runs/runs_page.h"
#include "window/database_choice.h"
#include "window/main_menus.h"
#include "window/status_progress.h"

namespace oomlab::ui {

namespace {

QString noDatabase() {
    return QObject::tr(
        "No run database is open: choose one with File → Open or create database… (Ctrl+O).");
}

// `page` in a frameless scroll area named `name`, which gives it all its room when it fits.
QScrollArea* scrolling(QWidget* page, const QString& name) {
    auto* scroll = new QScrollArea;
    scroll->setObjectName(name);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidget(page);
    return scroll;
}

}  // namespace

MainWindow::MainWindow(const MainWindowOptions& options, QWidget* parent)
    : QMainWindow(parent), m_baseFont(QApplication::font()), m_saveSession(options.restoreSession) {
    setObjectName(QStringLiteral("mainWindow"));
    ZoomStyle::apply(m_zoom);  // before any widget is made, as the workbench's main() does
    registerRunTypes();
    m_database = new RunDatabase(this);
    m_controller = new RunController(this);

    m_panel = new ExperimentPanel;
    auto* dock = new QDockWidget(tr("Experiment"), this);
    m_experimentDock = dock;
    dock->setObjectName(QStringLiteral("experimentDock"));
    dock->setWidget(m_panel);
    // Closable, so View → Experiment can hide it and give a small screen to the plots.
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable |
                      QDockWidget::DockWidgetClosable);
    addDockWidget(Qt::LeftDockWidgetArea, dock);

    m_live = new LivePage;
    m_runs = new RunsPage(m_database);
    connect(this, &MainWindow::presentationModeChanged, m_runs, &RunsPage::setPresenting);
    m_compare = new ComparePage;
    connect(this, &MainWindow::presentationModeChanged, m_compare, &ComparePage::setPresenting);
    m_tabs = new QTabWidget;
    m_tabs->setObjectName(QStringLiteral("pages"));
    m_tabs->setDocumentMode(true);
    // The pages of plots scroll where a small screen, the experiment panel or presentation
    // mode's large text leave them less than their plots need to be read, rather than grow
    // the window past the screen or squeeze the plots. L&ive: Alt+L opens the Lessons menu.
    m_tabs->addTab(scrolling(m_live, QStringLiteral("liveScroll")), tr("L&ive"));
    m_tabs->addTab(m_runs, tr("R&uns"));
    m_tabs->addTab(scrolling(m_compare, QStringLiteral("compareScroll")), tr("&Compare"));
    sizeTabsToCurrentPage(m_tabs);
    setCentralWidget(m_tabs);

    m_progress = new StatusProgress;
    statusBar()->addPermanentWidget(m_progress);
    m_menus = new MainMenus(this);

    wireController();
    connect(m_panel, &ExperimentPanel::runRequested, this, &MainWindow::startRun);
    connect(m_panel, &ExperimentPanel::stopRequested, this, &MainWindow::stopRun);
    connect(m_live, &LivePage::applyFix, this, &MainWindow::applyFix);
    connect(m_runs, &RunsPage::compareRequested, this, &MainWindow::compareRuns);
    // After the runs model, connected first, has read the runs again.
    connect(m_database, &RunDatabase::runsChanged, this, &MainWindow::updateEstimatorRecord);
    connect(m_runs->trackerSender(), &TrackerSender::sent, this,
            [this](const QString& report, bool failed, bool interactive) {
                if (!interactive) {  // a run sent when it ended: told, never in the way
                    statusBar()->showMessage(failed ? report.section(QLatin1Char('\n'), -1)
                                                    : report.section(QLatin1Char('\n'), 0, 0),
                                             failed ? 0 : 8000);
                }
            });
    connect(m_runs, &RunsPage::rerunRequested, this, &MainWindow::rerun);
    connect(m_runs, &RunsPage::configRequested, m_panel,
            [this](const ExperimentConfig& config, int processes) {
                m_panel->setConfig(config);
                m_panel->processesBox()->setValue(processes);
            });
    // One smoothing for every loss curve: a change on either page reaches the other.
    connect(m_live->smoothingBox(), qOverload<double>(&QDoubleSpinBox::valueChanged),
            m_compare->smoothingBox(), &QDoubleSpinBox::setValue);
    connect(m_compare->smoothingBox(), qOverload<double>(&QDoubleSpinBox::valueChanged),
            m_live->smoothingBox(), &QDoubleSpinBox::setValue);

    restoreSession(options);
}

MainWindow::~MainWindow() = default;

void MainWindow::updateEstimatorRecord() {
    m_panel->estimateView()->setRecord(m_runs->model()->predictionRecords());
}

void MainWindow::restoreSession(const MainWindowOptions& options) {
    // A first start fits the screen it opens on: the preferred size, or the screen's.
    resize(1440, 900);
    fitScreen();
    if (options.restoreSession) {
        restoreGeometry(AppSettings::windowGeometry());
        fitScreen();  // saved on a larger screen
        restoreState(AppSettings::windowState());
        const double zoom = AppSettings::value(QStringLiteral("view/zoom"), 1.0).toDouble();
        // Sessions kept before the mode was kept on its own were presenting from 1.6x up.
        setPresentationMode(AppSettings::value(QStringLiteral("view/presentation"),
                                               zoom >= kPresentationZoom - 0.01)
                                .toBool());
        setZoom(zoom);
        const int pace =
            AppSettings::value(QStringLiteral("run/pace"), int(RunController::Pace::Watchable))
                .toInt();
        const bool known =
            pace >= int(RunController::Pace::Full) && pace <= int(RunController::Pace::Slow);
        m_controller->setPace(known ? RunController::Pace(pace) : RunController::Pace::Watchable);
    }
    if (options.config) {
        m_panel->setConfig(*options.config);
    } else if (options.restoreSession && !AppSettings::lastConfigJson().isEmpty()) {
        try {
            m_panel->setConfig(parse_config_json(ss(AppSettings::lastConfigJson()), "settings"));
        } catch (const std::exception&) {
            // A config from another version: keep the defaults.
        }
    }
    QString path = options.databasePath;
    if (path.isEmpty() && options.restoreSession) {
        path = AppSettings::databasePath();
    }
    if (path.isEmpty()) {
        path = qs(RunStore::default_path());
    }
    const QString error = openDatabase(path, true);
    if (!error.isEmpty()) {
        // The window opens without a database and the user chooses one: a run is never saved
        // into another database than the one the user named or last chose.
        updateTitle();
        const bool offerDefault = path != qs(RunStore::default_path());
        QTimer::singleShot(0, this, [this, path, error, offerDefault] {
            askForRunDatabase(this, path, error, offerDefault, [this](DatabaseChoice choice) {
                if (choice == DatabaseChoice::Default) {
                    openDatabase(qs(RunStore::default_path()));
                } else if (choice == DatabaseChoice::Another) {
                    m_menus->openDatabaseDialog();
                }
                if (!m_database->isOpen()) {
                    statusBar()->showMessage(noDatabase());
                }
            });
        });
    }
}

bool MainWindow::haveDatabase() {
    if (!m_database->isOpen()) {
        statusBar()->showMessage(noDatabase());
    }
    return m_database->isOpen();
}

void MainWindow::wireController() {
    RunController* c = m_controller;
    connect(c, &RunController::runStarted, m_live, &LivePage::onRunStarted);
    connect(c, &RunController::lessonStarted, m_live, &LivePage::onLessonStarted);
    connect(
        c, &RunController::runStarted, this,
        [this](const ExperimentConfig&, const QString& name) { m_progress->onRunStarted(name); });
    connect(c, &RunController::runCreated, this, [this] {
        if (m_lessonFlow && m_controller->isRunning()) {
            m_lessonFlow->onRunCreated();
        }
    });
    connect(c, &RunController::prepareProgress, m_live, &LivePage::onPrepareProgress);
    connect(c, &RunController::prepareProgress, m_progress, &StatusProgress::onPrepare);
    connect(c, &RunController::runCreated, m_live, &LivePage::onRunCreated);
    connect(c, &RunController::runCreated, this, &MainWindow::sendWhileTraining);
    connect(c, &RunController::runCreated, this, &MainWindow::linkFixRun);
    connect(c, &RunController::runCreated, m_database, &RunDatabase::notifyRunsChanged);
    connect(c, &RunController::metricsArrived, m_live, &LivePage::onMetrics);
    connect(c, &RunController::eventArrived, m_live, &LivePage::onEvent);
    connect(c, &RunController::progressChanged, m_progress, &StatusProgress::onProgress);
    connect(c, &RunController::runFinished, this, &MainWindow::onRunFinished);
    connect(c, &RunController::lessonFinished, this, &MainWindow::onLessonFinished);
    connect(c, &RunController::batchTrial, this, [this](int batch, bool fits, qint64 peak) {
        statusBar()->showMessage(
            tr("batch %1: %2 (peak %3)")
                .arg(batch)
                .arg(fits ? tr("fits") : tr("out of memory"), formatBytes(peak)));
    });
    connect(
        c, &RunController::batchSearchFinished, this,
        [this](int batch, int predicted, const QString& error) {
            m_progress->clear();
            if (!error.isEmpty() && m_controller->stopRequested()) {
                // Its workers were stopped (a search of one process runs to its end).
                statusBar()->showMessage(tr("The batch-size search was stopped."), 8000);
                return;
            }
            if (!error.isEmpty()) {
                statusBar()->clearMessage();
                QMessageBox::information(this, tr("Largest batch size"), error);
                return;
            }
            if (batch == 0) {
                statusBar()->showMessage(tr("Not even a batch of one fits under the cap."), 15000);
                return;
            }
            m_panel->form()->setValue(QStringLiteral("train.batch_size"), QString::number(batch));
            QString found = tr("Largest batch size that fits: %1 (the estimator predicted %2); "
                               "train.batch_size is now %1.")
                                .arg(batch)
                                .arg(predicted);
            if (const int processes = m_panel->processes(); processes > 1) {
                found += QLatin1Char(' ') +
                         tr("Each trial trained all %1 processes; the batch fits on each of them.")
                             .arg(processes);
            }
            statusBar()->showMessage(found, 30000);
        });
    connect(c, &RunController::runningChanged, m_panel, &ExperimentPanel::setRunning);
}

void MainWindow::showPage(Page page) {
    m_tabs->setCurrentIndex(page);
}

bool MainWindow::startRun() {
    if (m_controller->isRunning() || !haveDatabase()) {
        return false;
    }
    if (!m_panel->isValid()) {
        statusBar()->showMessage(
            tr("Fix the highlighted settings first: %1").arg(m_panel->validationError()), 8000);
        return false;
    }
    if (m_saveSession) {
        AppSettings::setLastConfigJson(qs(config_to_json(m_panel->config())));
    }
    showPage(LiveTab);
    // A fix just applied: the run is named after it and linked to the run it fixes.
    m_fixOf = std::exchange(m_appliedFix, {});
    return m_controller->start(m_panel->config(), m_fixOf.name, m_panel->processes());
}

bool MainWindow::findBatchSize() {
    if (m_controller->isRunning() || !m_panel->isValid()) {
        return false;
    }
    m_progress->onRunStarted(tr("the batch-size search"));
    statusBar()->showMessage(tr("Searching the largest batch size under the cap…"));
    return m_controller->startBatchSearch(m_panel->config(), m_panel->processes());
}

void MainWindow::stopRun() {
    if (m_controller->isSearching()) {
        statusBar()->showMessage(tr("The batch-size search ends after its current trial."), 5000);
        return;
    }
    if (m_controller->isRunning()) {
        m_controller->stop();
        statusBar()->showMessage(tr("Stopping after the current step…"), 3000);
    }
}

bool MainWindow::rerun(const ExperimentConfig& config, const QString& name, int processes) {
    if (m_controller->isRunning()) {
        statusBar()->showMessage(tr("A run is going; stop it first (Esc)."), 5000);
        return false;
    }
    if (!haveDatabase()) {
        return false;
    }
    m_panel->setConfig(config);
    m_panel->processesBox()->setValue(processes);  // the runs page checked it fits the box
    showPage(LiveTab);
    return m_controller->start(config, name.isEmpty() ? QString() : tr("%1 (again)").arg(name),
                               m_panel->processes());
}

void MainWindow::compareRuns(const QVector<qint64>& runIds) {
    m_compare->showRuns(m_database->path(), runIds);
    showPage(CompareTab);
}

QString MainWindow::openDatabase(const QString& path, bool quiet) {
    if (m_controller->isRunning()) {
        const QString error = tr("A run is writing to the current database; stop it first.");
        if (!quiet) {
            QMessageBox::information(this, tr("Open database"), error);
        }
        return error;
    }
    const QString error = m_database->open(path);
    if (!error.isEmpty()) {
        if (!quiet) {
            QMessageBox::warning(this, tr("Open database"), error);
        }
        return error;
    }
    m_controller->setDatabasePath(m_database->path());
    if (m_saveSession) {
        AppSettings::setDatabasePath(QFileInfo(path).absoluteFilePath());
        AppSettings::addRecentDatabase(path);
    }
    m_menus->updateRecentDatabases();
    updateTitle();
    return {};
}

void MainWindow::applyFix(const Settings& settings, bool run) {
    m_appliedFix = {};
    QStringList applied;
    for (const auto& [key, value] : settings) {
        if (!m_panel->form()->setValue(qs(key), qs(value))) {
            statusBar()->showMessage(
                tr("%1=%2 was refused: %3")
                    .arg(qs(key), qs(value), m_panel->form()->keyError(qs(key))),
                10000);
            return;
        }
        applied << QStringLiteral("%1=%2").arg(qs(key), qs(value));
    }
    if (m_lastOomRun > 0 && m_database->isOpen()) {
        if (const std::optional<RunRecord> failed = m_database->store().find_run(m_lastOomRun)) {
            m_appliedFix = {m_lastOomRun, tr("%1 + %2").arg(qs(failed->name),
                                                            applied.join(QStringLiteral(", ")))};
        }
    }
    if (run) {
        startRun();
        return;
    }
    statusBar()->showMessage(
        tr("%1. Press Run (Ctrl+R) to try it.").arg(applied.join(QStringLiteral(", "))), 8000);
}

void MainWindow::linkFixRun(qint64 runId) {
    if (m_fixOf.run > 0 && m_database->isOpen()) {
        try {
            if (!m_database->store().set_fix_of(runId, m_fixOf.run)) {
                statusBar()->showMessage(
                    tr("Run %1 was deleted while its fix trained; run %2 is kept without the "
                       "link to it.")
                        .arg(m_fixOf.run)
                        .arg(runId),
                    8000);
            }
        } catch (const std::exception& error) {
            statusBar()->showMessage(error.what(), 8000);
        }
    }
    m_fixOf = {};
}

void MainWindow::onRunFinished(const RunEnd& end) {
    m_fixOf = {};  // a run refused before it was created links nothing
    if (end.status() == RunStatus::Oom && end.runId > 0) {
        m_lastOomRun = end.runId;
    }
    m_live->onRunFinished(end);
    if (end.runId > 0 && m_database->isOpen()) {  // a fix tried: predicted against measured
        if (const std::optional<RunRecord> run = m_database->store().find_run(end.runId)) {
            m_live->addHeaderLine(fixOutcomeText(m_database->store(), *run));
        }
    }
    m_progress->onFinished(end);
    if (end.badInput && !end.badInputKeys.isEmpty()) {
        m_panel->form()->setRunRefusal(end.badInputKeys, end.error());
    }
    m_database->notifyRunsChanged();
    if (end.runId > 0) {
        statusBar()->showMessage(tr("Run %1 %2").arg(end.runId).arg(statusName(end.status())),
                                 8000);
        sendRunEnds({end.runId});
    }
}

void MainWindow::sendRunEnds(const QVector<qint64>& runIds) {
    const TrackerTarget tracker = TrackerTarget::remembered();
    TrackerSender* sender = m_runs->trackerSender();
    for (const qint64 runId : runIds) {
        if (!sender->sendEndOfLive(runId) && tracker.sendEachRun && tracker.problem().isEmpty() &&
            m_database->isOpen()) {
            sender->send(m_database->path(), {runId}, tracker, /*interactive=*/false);
        }
    }
}

void MainWindow::sendWhileTraining(qint64 runId) {
    // A class's MLflow server gets each run as it trains (what the lecturer's view follows);
    // the run's end is sent by onRunFinished, going on in the same MLflow run.
    if (m_predictedLesson && m_controller->isRunning() && m_database->isOpen()) {
        // A lesson's run keeps which lesson, its place in it and what the student predicted:
        // a tracker gets them now and whenever the run is sent again.
        m_database->store().set_tracker_tags(
            runId, lesson_tags(m_predictedLesson->lesson, m_predictedLesson->next++,
                               m_predictedLesson->prediction));
    }
    const TrackerTarget tracker = TrackerTarget::remembered();
    if (tracker.sendEachRun && tracker.mlflow && tracker.problem().isEmpty() &&
        m_database->isOpen()) {
        m_runs->trackerSender()->sendWhileTraining(m_database->path(), runId, tracker);
    }
}

void MainWindow::updateTitle() {
    // The database's name, once: the window system adds the application's ("— OOM Lab"), and
    // the Runs tab shows the whole path.
    setWindowTitle(m_database->isOpen() ? QFileInfo(m_database->path()).fileName()
                                        : tr("No run database"));
}

void MainWindow::setTrainingPace(RunController::Pace pace) {
    m_controller->setPace(pace);
    if (m_saveSession) {
        AppSettings::setValue(QStringLiteral("run/pace"), int(pace));
    }
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (m_saveSession) {
        AppSettings::setWindowLayout(saveGeometry(), saveState());
        AppSettings::setLastConfigJson(qs(config_to_json(m_panel->config())));
    }
    m_controller->stop();
    event->accept();
}

}  // namespace oomlab::ui
