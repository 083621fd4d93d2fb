#include "window/screenshot.h"

#include <QApplication>
#include <QPixmap>
#include <QTextStream>
#include <QTimer>

#include "compare/compare_page.h"
#include "experiment/experiment_panel.h"
#include "live/run_controller.h"
#include "runs/runs_page.h"
#include "window/main_window.h"

namespace oomlab::ui {
namespace {

void finish(MainWindow* window, const ScreenshotRequest& request) {
    // Give the coalesced replots and the layouts a moment to settle: a table's columns are
    // fitted to a run that ended a double-click's time later (fitted_columns.h).
    QTimer::singleShot(QApplication::doubleClickInterval() + 400, window, [window, request] {
        const bool ok = saveWindowImage(window, request.file);
        QTextStream(ok ? stdout : stderr)
            << (ok ? QStringLiteral("wrote %1\n").arg(request.file)
                   : QStringLiteral("could not write %1\n").arg(request.file));
        QApplication::exit(ok ? 0 : 1);
    });
}

// Two runs that differ in one lesson-worthy way: the dataset's words only versus the whole
// GloVe vocabulary in a trainable table.
QVector<QueuedRun> compareRuns(ExperimentConfig base) {
    // Short runs: a trainable full table trains slowly on a CPU.
    if (base.train.max_steps == 0) {
        base.train.max_steps = 100;
        base.eval.every = 25;
    }
    ExperimentConfig full = base;
    full.embeddings.vocab = VocabMode::Full;
    ExperimentConfig frozen = full;
    frozen.embeddings.trainable = false;
    return {{base, QObject::tr("dataset vocabulary")},
            {full, QObject::tr("full GloVe vocabulary")},
            {frozen, QObject::tr("full vocabulary, frozen")}};
}

}  // namespace

bool saveWindowImage(MainWindow* window, const QString& file) {
    const QPixmap image = window->grab();
    return !image.isNull() && image.save(file, "PNG");
}

QString scheduleScreenshot(MainWindow* window, const ScreenshotRequest& request) {
    if (request.view != QLatin1String("live") && request.view != QLatin1String("runs") &&
        request.view != QLatin1String("compare")) {
        return QObject::tr("--screenshot-view: \"%1\" is not live, runs or compare")
            .arg(request.view);
    }
    // Settings that cannot run (a dataset that is not there) would leave nothing to wait for.
    if (!window->experimentPanel()->isValid()) {
        return QObject::tr("the experiment cannot run: %1")
            .arg(window->experimentPanel()->validationError());
    }
    QTimer::singleShot(request.timeoutMs, window, [request] {
        QTextStream(stderr) << "screenshot: timed out waiting for the runs\n";
        QApplication::exit(1);
    });
    RunController* controller = window->controller();
    const ExperimentConfig config = window->experimentPanel()->config();
    if (request.view == QLatin1String("compare")) {
        QObject::connect(controller, &RunController::queueFinished, window,
                         [window, request](const QVector<qint64>& ids, bool) {
                             QObject::connect(window->comparePage(), &ComparePage::loaded, window,
                                              [window, request] { finish(window, request); });
                             window->compareRuns(ids);
                         });
        controller->startQueue(compareRuns(config));
        return {};
    }
    QObject::connect(controller, &RunController::queueFinished, window,
                     [window, request](const QVector<qint64>& ids, bool) {
                         if (request.view == QLatin1String("runs")) {
                             window->showPage(MainWindow::RunsTab);
                             window->runsPage()->selectRuns(ids);
                         }
                         finish(window, request);
                     });
    if (!window->startRun()) {
        return QObject::tr("the run did not start (is a database open?)");
    }
    return {};
}

}  // namespace oomlab::ui
