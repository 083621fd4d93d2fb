#include "ui_test_support.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QPushButton>
#include <QSettings>
#include <QtTest>

#include <utility>

#include <unistd.h>

#include "experiment/experiment_panel.h"
#include "live/run_controller.h"
#include "snapshot/snapshot_window.h"
#include "window/main_menus.h"

namespace oomlab::ui::test {

QString fixture(const QString& name) {
    return QStringLiteral(OOMLAB_TEST_DATA_DIR "/") + name;
}

QString sharedDataDir() {
    return QStringLiteral(OOMLAB_SHARED_DATA_DIR);
}

QString benchResult(const QString& name) {
    return QStringLiteral(OOMLAB_RESULTS_DIR "/") + name;
}

QString guiProgram() {
    return QStringLiteral(OOMLAB_GUI_PATH);
}

QString mlflowServerScript() {
    return QStringLiteral(OOMLAB_MLFLOW_SERVER_SCRIPT);
}

namespace {

std::map<std::string, TestRunner>& tests() {
    static std::map<std::string, TestRunner> registered;
    return registered;
}

}  // namespace

bool registerTest(const char* sourceFile, TestRunner run) {
    // Plain string work: this runs before main, with no QCoreApplication yet.
    std::string name = sourceFile;
    name.erase(0, name.find_last_of('/') + 1);
    tests().emplace(name.substr(0, name.find('.')), run);
    return true;
}

const std::map<std::string, TestRunner>& registeredTests() {
    return tests();
}

void prepareEnvironment() {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
}

void isolateSettings(const QTemporaryDir& folder) {
    QCoreApplication::setOrganizationName(QStringLiteral("oomlab-test"));
    QCoreApplication::setApplicationName(QStringLiteral("oomlab-test"));
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, folder.path());
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, folder.path());
}

MainWindowOptions windowOptions(const QString& databasePath,
                                std::optional<ExperimentConfig> config) {
    MainWindowOptions options;
    options.databasePath = databasePath;
    options.config = std::move(config);
    options.restoreSession = false;
    return options;
}

double residentMiB() {
    QFile statm(QStringLiteral("/proc/self/statm"));
    if (!statm.open(QIODevice::ReadOnly)) {
        return 0;
    }
    const QList<QByteArray> fields = statm.readAll().split(' ');
    return fields.value(1).toDouble() * double(sysconf(_SC_PAGESIZE)) / double(1 << 20);
}

ExperimentConfig tinyConfig(int steps) {
    ExperimentConfig config;
    config.device = "cpu";
    config.train.max_steps = steps;
    config.eval.every = std::max(1, steps / 2);
    return config;
}

std::unique_ptr<MainWindow> shownWindow(const QString& databasePath) {
    auto window = std::make_unique<MainWindow>(windowOptions(databasePath, tinyConfig(12)));
    window->resize(1400, 900);
    window->show();
    if (!QTest::qWaitForWindowExposed(window.get())) {
        QTest::qFail("the window was never exposed", __FILE__, __LINE__);
        return nullptr;
    }
    return window;
}

RunEnd runAndWait(MainWindow& window) {
    QSignalSpy finished(window.controller(), &RunController::runFinished);
    QTest::mouseClick(window.experimentPanel()->runButton(), Qt::LeftButton);
    if (!QTest::qWaitFor([&] { return finished.count() > 0; }, 60000)) {
        QTest::qFail("the run did not end within a minute", __FILE__, __LINE__);
        return RunEnd();
    }
    return finished.at(0).at(0).value<RunEnd>();
}

SnapshotWindow* openSnapshotAndWait(MainWindow& window, const QString& path) {
    SnapshotWindow* snapshot = window.menus()->openSnapshot(path);
    QSignalSpy loaded(snapshot, &SnapshotWindow::loaded);
    return loaded.wait(30000) ? snapshot : nullptr;
}

void saveScreenshot(QWidget* widget, const QString& name) {
    if (!qEnvironmentVariableIsEmpty("OOMLAB_SCREENSHOT_DIR")) {
        widget->grab().save(QDir(qEnvironmentVariable("OOMLAB_SCREENSHOT_DIR")).filePath(name));
    }
}

bool writeBytes(const QString& path, const std::string& bytes) {
    QFile file(path);
    return file.open(QIODevice::WriteOnly) &&
           file.write(bytes.data(), qint64(bytes.size())) == qint64(bytes.size());
}

}  // namespace oomlab::ui::test
