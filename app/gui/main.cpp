// oomlab: the Qt workbench. Thin: options, the display check, then the main window.
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QTemporaryDir>
#include <QTextStream>

#include <cstdio>
#include <cstring>
#include <optional>

#include "common/formatting.h"
#include "oomlab/common/version.h"
#include "oomlab/config/config_io.h"
#include "oomlab/config/config_keys.h"
#include "window/main_window.h"
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
    const bool screenshot = hasArgument(argc, argv, "--screenshot");
    const bool informational = hasArgument(argc, argv, "--help") || hasArgument(argc, argv, "-h") ||
                               hasArgument(argc, argv, "--version") ||
                               hasArgument(argc, argv, "-v");
    if (!hasDisplay()) {
        if (!screenshot && !informational) {
            std::fputs(kNoDisplay, stderr);
            return 1;
        }
        qputenv("QT_QPA_PLATFORM", "offscreen");  // a screenshot needs no screen
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
    const QCommandLineOption fresh(QStringLiteral("fresh"),
                                   QStringLiteral("Ignore the saved settings and window layout."));
    parser.addOptions({db, config, set, shot, shotView, fresh});
    parser.process(app);

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
    if (parser.isSet(shot) && options.databasePath.isEmpty()) {
        options.databasePath = scratch.filePath(QStringLiteral("screenshot.sqlite"));
    }

    oomlab::ui::MainWindow window(options);
    if (parser.isSet(shot)) {
        window.resize(1600, 1000);
    }
    window.show();
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
