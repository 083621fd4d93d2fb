// Shared by the Qt tests: an isolated QApplication (offscreen, settings in a temp folder)
// and tiny CPU configs.
#pragma once

#include <QString>
#include <QTemporaryDir>

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "common/background_work.h"
#include "oomlab/config/experiment_config.h"
#include "window/main_window.h"

namespace oomlab::ui {
class SnapshotWindow;
}

namespace oomlab::ui::test {

// Where this build put what the tests run or read; only ui_test_support.cpp is compiled with
// these folders, so no other test's object depends on where the tree was checked out.
QString fixture(const QString& name);      // the project's own fixtures (tests/data)
QString benchResult(const QString& name);  // what bench/results holds (real GPUs' snapshots)
QString sharedDataDir();                   // ../shared/data beside the project (may be absent)
QString guiProgram();                      // oomlab
QString mlflowServerScript();              // tests/support/mlflow_server.py

// The process's resident memory (/proc/self/statm), in MiB.
double residentMiB();

// Offscreen unless a platform is chosen; call before QApplication exists.
void prepareEnvironment();
// Settings under a temporary folder, never the user's; call after QApplication exists.
void isolateSettings(const QTemporaryDir& folder);

// A window on the database `databasePath`, ignoring the saved session (layout, zoom, pace),
// starting with `config` in the panel when one is given.
MainWindowOptions windowOptions(const QString& databasePath,
                                std::optional<ExperimentConfig> config = std::nullopt);

// The default experiment on the CPU, trimmed to `steps` optimizer steps, validating twice.
ExperimentConfig tinyConfig(int steps = 12);

// A shown 1400 x 900 window on `databasePath` with tinyConfig(12) in its panel (null, with a
// test failure, when it is not exposed).
std::unique_ptr<MainWindow> shownWindow(const QString& databasePath);

// Presses the panel's Run and waits (at most a minute) for the run's end; an empty RunEnd
// when it did not end.
RunEnd runAndWait(MainWindow& window);

// The snapshot at `path` opened in `window` (File → Open memory snapshot…) once read (at most
// 30 s); null when it was not.
SnapshotWindow* openSnapshotAndWait(MainWindow& window, const QString& path);

// `bytes` as the file `path`; whether all were written.
bool writeBytes(const QString& path, const std::string& bytes);

// A test class's QTEST_MAIN, run with the program's arguments.
using TestRunner = int (*)(int argc, char** argv);
// Registers `run` under the name of the file `sourceFile` less its folder and extension;
// returns true (OOMLAB_UI_TEST's registration is a static's initialisation).
bool registerTest(const char* sourceFile, TestRunner run);
// The registered tests, by name.
const std::map<std::string, TestRunner>& registeredTests();

// `widget` as docs/ shows it (`./oomlab.sh screenshots`), as NAME in the folder
// OOMLAB_SCREENSHOT_DIR names; nothing where it is not set.
void saveScreenshot(QWidget* widget, const QString& name);

}  // namespace oomlab::ui::test

// The workbench's tests are one program, oomlab_ui_tests (one link, and a few files to a
// compile unit): each test file registers its test class, with a QTEST_MAIN's body and the
// environment above, under the file's name (class_window_test), which the program's first
// argument names.
#define OOMLAB_UI_TEST(TestClass)                                    \
    static int oomlabRun##TestClass(int argc, char** argv) {         \
        ::oomlab::ui::test::prepareEnvironment();                    \
        QApplication app(argc, argv);                                \
        ::oomlab::ui::letBackgroundWorkWait();                       \
        QTemporaryDir settings;                                      \
        ::oomlab::ui::test::isolateSettings(settings);               \
        TestClass test;                                              \
        return QTest::qExec(&test, argc, argv);                      \
    }                                                                \
    static const bool oomlabRegistered##TestClass [[maybe_unused]] = \
        ::oomlab::ui::test::registerTest(__FILE__, &oomlabRun##TestClass);
