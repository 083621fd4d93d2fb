// oomlab: the Qt workbench. Thin: options, the display check, then the main window.
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QTemporaryDir>
#include <QTextStream>
#include <QTimer>

#include <cstdio>
#include <cstring>
#include <optional>

#include "common/formatting.h"
#include "oomlab/common/version.h"
#include "oomlab/config/config_io.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/store/run_store.h"
#include "snapshot/snapshot_window.h"
#include "window/main_menus.h"
#include "window/main_window.h"
#include "window/plot_render.h"
#include "window/screenshot.h"

namespace {

bool hasArgument(int argc, char** argv, const char* name) {
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], name) == 0) {
            return true;
        }
    }
    return false;
}

// "1024x768" as a size; invalid when it does not read as one.
QSize parseSize(const QString& text) {
    const QStringList parts = text.toLower().split(QLatin1Char('x'));
    bool wide = false;
    bool high = false;
    const QSize size =
        parts.size() == 2 ? QSize(parts[0].toInt(&wide), parts[1].toInt(&high)) : QSize();
    return wide && high && size.width() >= 200 && size.height() >= 150 && size.width() <= 10000 &&
                   size.height() <= 10000
               ? size
               : QSize();
}

bool hasDisplay() {
    return !qEnvironmentVariableIsEmpty("DISPLAY") ||
           !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") ||
           !qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM");
}

constexpr const char* kNoDisplay =
    "oomlab: no display found (DISPLAY and WAYLAND_DISPLAY are not set).\n"
    "  Run experiments headless with the same engine and database:\n"
    "    oomlab-cli run [--set KEY=VALUE]...      (see oomlab-cli --help)\n"
    "  or render the window without a screen:\n"
    "    QT_QPA_PLATFORM=offscreen oomlab --screenshot window.png\n";

}  // namespace

int main(int argc, char** argv) {
    const bool screenshot =
        hasArgument(argc, argv, "--screenshot") || hasArgument(argc, argv, "--export-plot");
    const bool informational = hasArgument(argc, argv, "--help") || hasArgument(argc, argv, "-h") ||
                               hasArgument(argc, argv, "--version") ||
                               hasArgument(argc, argv, "-v");
    if (!hasDisplay()) {
        if (!screenshot && !informational) {
            std::fputs(kNoDisplay, stderr);
            return 1;
        }
        qputenv("QT_QPA_PLATFORM", "offscreen");  // a screenshot or a plot needs no screen
    }
    QGuiApplication::setHighDpiScaleFactorRoundingPolicy(
        Qt::HighDpiScaleFactorRoundingPolicy::PassThrough);
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("oomlab"));
    QApplication::setApplicationName(QStringLiteral("oomlab"));
    QApplication::setApplicationDisplayName(QStringLiteral("OOM Lab"));
    QApplication::setApplicationVersion(oomlab::ui::qs(oomlab::engine_version()));
    QApplication::setDesktopFileName(QStringLiteral("oomlab"));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("OOM Lab: a workbench for understanding GPU out-of-memory errors."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption db(QStringLiteral("db"), QStringLiteral("Run database (SQLite)."),
                                QStringLiteral("FILE"));
    const QCommandLineOption config(QStringLiteral("config"),
                                    QStringLiteral("Start with this experiment config (JSON)."),
                                    QStringLiteral("FILE"));
    const QCommandLineOption set(QStringLiteral("set"),
                                 QStringLiteral("Set one config key (repeatable)."),
                                 QStringLiteral("KEY=VALUE"));
    const QCommandLineOption shot(
        QStringLiteral("screenshot"),
        QStringLiteral("Train a short default run, save the window as a PNG and quit. Uses a "
                       "temporary database unless --db is given; needs no display."),
        QStringLiteral("FILE"));
    const QCommandLineOption shotView(
        QStringLiteral("screenshot-view"),
        QStringLiteral("The page to capture: live (default), runs, or compare (three "
                       "contrasting runs)."),
        QStringLiteral("VIEW"), QStringLiteral("live"));
    const QCommandLineOption shotSize(
        QStringLiteral("screenshot-size"),
        QStringLiteral("The window's size for --screenshot, e.g. 1024x768; it never grows "
                       "past it."),
        QStringLiteral("WxH"), QStringLiteral("1600x1000"));
    const QCommandLineOption exportPlot(
        QStringLiteral("export-plot"),
        QStringLiteral("Draw one plot of a saved run into --out (PNG, SVG or PDF) and quit; "
                       "needs no display."),
        QStringLiteral("RUN"));
    const QCommandLineOption view(QStringLiteral("view"),
                                  QStringLiteral("The plot for --export-plot: ") +
                                      oomlab::ui::plotExportViews() + QStringLiteral("."),
                                  QStringLiteral("VIEW"), QStringLiteral("memory"));
    const QCommandLineOption out(QStringLiteral("out"),
                                 QStringLiteral("The file --export-plot writes."),
                                 QStringLiteral("FILE"));
    const QCommandLineOption size(QStringLiteral("size"),
                                  QStringLiteral("The plot's size for --export-plot."),
                                  QStringLiteral("WxH"), QStringLiteral("1200x700"));
    const QCommandLineOption force(
        QStringLiteral("force"),
        QStringLiteral("Let --export-plot replace an existing file that is not an image."));
    const QCommandLineOption presentation(
        QStringLiteral("presentation"),
        QStringLiteral("Start in presentation mode: large text in the form, plots, legends and "
                       "lessons, for a projector (View > Presentation mode, F5)."));
    const QCommandLineOption snapshot(
        QStringLiteral("snapshot"),
        QStringLiteral("Open a memory snapshot of any PyTorch program "
                       "(torch.cuda.memory._dump_snapshot) in a window of its own; with "
                       "--screenshot, capture that window instead."),
        QStringLiteral("FILE"));
    const QCommandLineOption fresh(QStringLiteral("fresh"),
                                   QStringLiteral("Ignore the saved settings and window layout."));
    parser.addOptions({db, config, set, shot, shotView, shotSize, exportPlot, view, out, size,
                       force, presentation, snapshot, fresh});
    parser.process(app);

    if (parser.isSet(exportPlot)) {
        oomlab::ui::PlotExport request;
        bool idOk = false;
        request.runId = parser.value(exportPlot).toLongLong(&idOk);
        request.databasePath =
            parser.isSet(db) ? parser.value(db) : oomlab::ui::qs(oomlab::RunStore::default_path());
        request.view = parser.value(view);
        request.file = parser.value(out);
        request.size = parseSize(parser.value(size));
        request.force = parser.isSet(force);
        QString error;
        if (!idOk || request.runId <= 0) {
            error = QStringLiteral("--export-plot: \"%1\" is not a run id")
                        .arg(parser.value(exportPlot));
        } else if (!request.size.isValid()) {
            error = QStringLiteral("--size: \"%1\" is not a size such as 1200x700")
                        .arg(parser.value(size));
        } else {
            error = oomlab::ui::exportRunPlot(request);
        }
        if (!error.isEmpty()) {
            QTextStream(stderr) << "oomlab: " << error << '\n';
            return 2;
        }
        QTextStream(stdout) << "wrote " << request.file << '\n';
        return 0;
    }

    oomlab::ui::MainWindowOptions options;
    options.restoreSession = !parser.isSet(fresh) && !parser.isSet(shot);
    try {
        if (parser.isSet(config) || parser.isSet(set)) {
            oomlab::ExperimentConfig experiment =
                parser.isSet(config)
                    ? oomlab::load_config_file(oomlab::ui::ss(parser.value(config)))
                    : oomlab::ExperimentConfig();
            for (const QString& assignment : parser.values(set)) {
                oomlab::apply_config_override(experiment, oomlab::ui::ss(assignment));
            }
            options.config = experiment;
        } else if (parser.isSet(shot)) {
            options.config = oomlab::ExperimentConfig();
        }
    } catch (const std::exception& error) {
        QTextStream(stderr) << "oomlab: " << error.what() << '\n';
        return 2;
    }
    QTemporaryDir scratch;
    options.databasePath = parser.value(db);
    if (!options.databasePath.isEmpty()) {
        // A database the user names is the one written to, or none: never another in its place.
        try {
            oomlab::RunStore::open(oomlab::ui::ss(options.databasePath));
        } catch (const std::exception& error) {
            QTextStream(stderr) << "oomlab: " << error.what() << '\n';
            return 2;
        }
    }
    if (parser.isSet(shot) && options.databasePath.isEmpty()) {
        options.databasePath = scratch.filePath(QStringLiteral("screenshot.sqlite"));
    }

    const QSize windowSize = parseSize(parser.value(shotSize));
    if (parser.isSet(shot) && !windowSize.isValid()) {
        QTextStream(stderr) << "oomlab: --screenshot-size: \"" << parser.value(shotSize)
                            << "\" is not a size such as 1024x768\n";
        return 2;
    }
    oomlab::ui::MainWindow window(options);
    if (parser.isSet(presentation)) {
        window.setZoom(oomlab::ui::MainWindow::kPresentationZoom);
    }
    if (parser.isSet(shot)) {
        // The screen the picture stands for: the window must fit it, not grow past it.
        window.setMaximumSize(windowSize);
        window.resize(windowSize);
    }
    window.show();
    if (parser.isSet(snapshot)) {
        oomlab::ui::SnapshotWindow* opened = window.menus()->openSnapshot(parser.value(snapshot));
        if (parser.isSet(shot)) {
            opened->resize(windowSize);
            QObject::connect(
                opened, &oomlab::ui::SnapshotWindow::loaded, opened,
                [opened, file = parser.value(shot)] {
                    // Once laid out and its plot drawn (replots are coalesced).
                    QTimer::singleShot(500, opened, [opened, file] {
                        if (!opened->error().isEmpty()) {  // not only in the PNG
                            QTextStream(stderr) << "oomlab: " << opened->error() << '\n';
                        }
                        const bool saved = opened->grab().save(file, "PNG");
                        QTextStream(saved ? stdout : stderr)
                            << (saved ? "wrote " : "oomlab: cannot write ") << file << '\n';
                        QApplication::exit(saved && opened->error().isEmpty() ? 0 : 1);
                    });
                });
            return QApplication::exec();
        }
    }
    if (parser.isSet(shot)) {
        oomlab::ui::ScreenshotRequest request;
        request.file = parser.value(shot);
        request.view = parser.value(shotView);
        const QString error = oomlab::ui::scheduleScreenshot(&window, request);
        if (!error.isEmpty()) {
            QTextStream(stderr) << "oomlab: " << error << '\n';
            return 2;
        }
    }
    return QApplication::exec();
}
