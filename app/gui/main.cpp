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

#include "common/background_work.h"
#include "common/formatting.h"
#include "common/zoom_style.h"
#include "oomlab/common/version.h"
#include "oomlab/config/config_io.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/store/run_store.h"
#include "snapshot/snapshot_window.h"
#include "window/lesson_opening.h"
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

// The workbench's options, each named once for the parser and the code that reads it.
struct Options {
    QCommandLineOption db{QStringLiteral("db"), QStringLiteral("Run database (SQLite)."),
                          QStringLiteral("FILE")};
    QCommandLineOption config{QStringLiteral("config"),
                              QStringLiteral("Start with this experiment config (JSON)."),
                              QStringLiteral("FILE")};
    QCommandLineOption set{QStringLiteral("set"),
                           QStringLiteral("Set one config key (repeatable)."),
                           QStringLiteral("KEY=VALUE")};
    QCommandLineOption shot{
        QStringLiteral("screenshot"),
        QStringLiteral("Train a short default run, save the window as a PNG and quit. Uses a "
                       "temporary database unless --db is given; needs no display."),
        QStringLiteral("FILE")};
    QCommandLineOption shotView{
        QStringLiteral("screenshot-view"),
        QStringLiteral("The page to capture: live (default), runs, or compare (three "
                       "contrasting runs)."),
        QStringLiteral("VIEW"), QStringLiteral("live")};
    QCommandLineOption shotSize{
        QStringLiteral("screenshot-size"),
        QStringLiteral("The window's size for --screenshot, e.g. 1024x768; it never grows "
                       "past it."),
        QStringLiteral("WxH"), QStringLiteral("1600x1000")};
    QCommandLineOption exportPlot{
        QStringLiteral("export-plot"),
        QStringLiteral("Draw one plot of a saved run into --out (PNG, SVG or PDF) and quit; "
                       "needs no display."),
        QStringLiteral("RUN")};
    QCommandLineOption view{QStringLiteral("view"),
                            QStringLiteral("The plot for --export-plot: ") +
                                oomlab::ui::plotExportViews() + QStringLiteral("."),
                            QStringLiteral("VIEW"), QStringLiteral("memory")};
    QCommandLineOption out{QStringLiteral("out"), QStringLiteral("The file --export-plot writes."),
                           QStringLiteral("FILE")};
    QCommandLineOption size{QStringLiteral("size"),
                            QStringLiteral("The plot's size for --export-plot."),
                            QStringLiteral("WxH"), QStringLiteral("1200x700")};
    QCommandLineOption force{
        QStringLiteral("force"),
        QStringLiteral("Let --export-plot replace an existing file that is not an image.")};
    QCommandLineOption presentation{
        QStringLiteral("presentation"),
        QStringLiteral("Start in presentation mode: large text in the form, plots, legends and "
                       "lessons, for a projector (View > Presentation mode, F5).")};
    QCommandLineOption snapshot{
        QStringLiteral("snapshot"),
        QStringLiteral("Open a memory snapshot of any PyTorch program "
                       "(torch.cuda.memory._dump_snapshot) in a window of its own, without the "
                       "workbench; with --screenshot, capture that window instead."),
        QStringLiteral("FILE")};
    QCommandLineOption lesson{
        QStringLiteral("lesson"),
        QStringLiteral("Open at a lesson: a lesson file, a built-in lesson's name, or the "
                       "http:// or https:// address of a lesson file a lecturer serves."),
        QStringLiteral("FILE|NAME|URL")};
    QCommandLineOption fresh{QStringLiteral("fresh"),
                             QStringLiteral("Ignore the saved settings and window layout.")};

    void addTo(QCommandLineParser& parser) const {
        parser.addOptions({db, config, set, shot, shotView, shotSize, exportPlot, view, out, size,
                           force, presentation, snapshot, lesson, fresh});
        parser.addPositionalArgument(QStringLiteral("FILE"),
                                     QStringLiteral("A lesson file to open at, as --lesson FILE "
                                                    "(what a double-click on one runs)."),
                                     QStringLiteral("[FILE]"));
    }
};

int fail(const QString& error) {
    QTextStream(stderr) << "oomlab: " << error << '\n';
    return 2;
}

// --export-plot: one plot of a saved run drawn into a file, no window shown.
int exportPlot(const QCommandLineParser& parser, const Options& o) {
    oomlab::ui::PlotExport request;
    bool idOk = false;
    request.runId = parser.value(o.exportPlot).toLongLong(&idOk);
    request.databasePath =
        parser.isSet(o.db) ? parser.value(o.db) : oomlab::ui::qs(oomlab::RunStore::default_path());
    request.view = parser.value(o.view);
    request.file = parser.value(o.out);
    request.size = parseSize(parser.value(o.size));
    request.force = parser.isSet(o.force);
    if (!idOk || request.runId <= 0) {
        return fail(QStringLiteral("--export-plot: \"%1\" is not a run id")
                        .arg(parser.value(o.exportPlot)));
    }
    if (!request.size.isValid()) {
        return fail(QStringLiteral("--size: \"%1\" is not a size such as 1200x700")
                        .arg(parser.value(o.size)));
    }
    const QString error = oomlab::ui::exportRunPlot(request);
    if (!error.isEmpty()) {
        return fail(error);
    }
    QTextStream(stdout) << "wrote " << request.file << '\n';
    return 0;
}

// The main window's start: its experiment from --config and --set, its database. An error is
// returned for the user; a database the user names is the one written to, or none: never
// another in its place.
QString readWindowOptions(const QCommandLineParser& parser, const Options& o,
                          std::optional<QTemporaryDir>& scratch,
                          oomlab::ui::MainWindowOptions& options) {
    options.restoreSession = !parser.isSet(o.fresh) && !parser.isSet(o.shot);
    options.databasePath = parser.value(o.db);
    try {
        if (parser.isSet(o.config) || parser.isSet(o.set)) {
            oomlab::ExperimentConfig experiment =
                parser.isSet(o.config)
                    ? oomlab::load_config_file(oomlab::ui::ss(parser.value(o.config)))
                    : oomlab::ExperimentConfig();
            for (const QString& assignment : parser.values(o.set)) {
                oomlab::apply_config_override(experiment, oomlab::ui::ss(assignment));
            }
            options.config = experiment;
        } else if (parser.isSet(o.shot)) {
            options.config = oomlab::ExperimentConfig();
        }
        if (!options.databasePath.isEmpty()) {
            oomlab::RunStore::open(oomlab::ui::ss(options.databasePath));
        }
    } catch (const std::exception& error) {
        return QString::fromStdString(error.what());
    }
    if (parser.isSet(o.shot) && options.databasePath.isEmpty()) {
        // Made only here: a folder made at every start stays in the temporary folder when the
        // workbench is ended by a signal (a session's logout, `pkill oomlab`).
        options.databasePath = scratch.emplace().filePath(QStringLiteral("screenshot.sqlite"));
    }
    return {};
}

// --snapshot with --screenshot: the snapshot's window saved as a PNG once it has loaded and
// drawn, then the application quits.
void captureWhenLoaded(oomlab::ui::SnapshotWindow* opened, const QSize& size, const QString& file) {
    opened->resize(size);
    QObject::connect(opened, &oomlab::ui::SnapshotWindow::loaded, opened, [opened, file] {
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
}

void describeApplication() {
    QApplication::setOrganizationName(QStringLiteral("oomlab"));
    QApplication::setApplicationName(QStringLiteral("oomlab"));
    QApplication::setApplicationDisplayName(QStringLiteral("OOM Lab"));
    QApplication::setApplicationVersion(oomlab::ui::qs(oomlab::engine_version()));
    QApplication::setDesktopFileName(QStringLiteral("oomlab"));
}

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
    oomlab::ui::ZoomStyle::apply(1.0);  // every window in the style its layouts are tested in
    oomlab::ui::letBackgroundWorkWait();
    describeApplication();

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("OOM Lab: a workbench for understanding GPU out-of-memory errors."));
    parser.addHelpOption();
    parser.addVersionOption();
    const Options o;
    o.addTo(parser);
    parser.process(app);
    if (parser.isSet(o.exportPlot)) {
        return exportPlot(parser, o);
    }

    std::optional<QTemporaryDir> scratch;
    oomlab::ui::MainWindowOptions options;
    if (const QString error = readWindowOptions(parser, o, scratch, options); !error.isEmpty()) {
        return fail(error);
    }
    const QSize windowSize = parseSize(parser.value(o.shotSize));
    if (parser.isSet(o.shot) && !windowSize.isValid()) {
        return fail(QStringLiteral("--screenshot-size: \"%1\" is not a size such as 1024x768")
                        .arg(parser.value(o.shotSize)));
    }
    const QStringList files = parser.positionalArguments();
    if (files.size() > 1 || (!files.isEmpty() && parser.isSet(o.lesson))) {
        return fail(QStringLiteral("one lesson at a time: give a lesson file or --lesson, once"));
    }
    const QString lessonSource = parser.isSet(o.lesson) ? parser.value(o.lesson) : files.value(0);
    oomlab::ui::MainWindow window(options);
    if (parser.isSet(o.presentation)) {
        window.setPresentationMode(true);  // the mode, not only its text size (F5's panel too)
    }
    // A snapshot opened from the command line opens alone, and closing it quits; the workbench
    // appears if the snapshot's experiment is loaded into it.
    if (!parser.isSet(o.snapshot) || parser.isSet(o.shot)) {
        window.show();
    }
    if (parser.isSet(o.shot)) {
        // The screen the picture stands for: the window must fit it, not grow past it. Set
        // once shown, so that it is kept as a size chosen rather than fitted to the screen
        // the picture is drawn on (800x600 without a display).
        window.setMaximumSize(windowSize);
        window.resize(windowSize);
    }
    if (parser.isSet(o.snapshot)) {
        oomlab::ui::SnapshotWindow* opened = window.menus()->openSnapshot(parser.value(o.snapshot));
        if (parser.isSet(o.shot)) {
            captureWhenLoaded(opened, windowSize, parser.value(o.shot));
            return QApplication::exec();
        }
    }
    if (!lessonSource.isEmpty()) {
        oomlab::ui::openLessonFrom(&window, lessonSource,
                                   [](oomlab::ui::LessonFlow*, const QString& error) {
                                       if (!error.isEmpty()) {
                                           QTextStream(stderr) << "oomlab: " << error << '\n';
                                       }
                                   });
    }
    if (parser.isSet(o.shot)) {
        oomlab::ui::ScreenshotRequest request;
        request.file = parser.value(o.shot);
        request.view = parser.value(o.shotView);
        if (const QString error = oomlab::ui::scheduleScreenshot(&window, request);
            !error.isEmpty()) {
            return fail(error);
        }
    }
    return QApplication::exec();
}
