// The first start under a real window manager (openbox on Xvfb, started by
// with_window_manager.sh at the screen size it is given): the window, its frame included, fits
// the free area of the screen, so the status bar (progress, time left) is on it.
#include <QApplication>
#include <QScreen>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QtTest>

#include "ui_test_support.h"

using namespace oomlab::ui;

class WindowManagerTest : public QObject {
    Q_OBJECT

private slots:
    void firstStartFitsTheScreenFrameIncluded() {
        if (QGuiApplication::platformName() != QLatin1String("xcb")) {
            QSKIP("needs a window manager on an X display (with_window_manager.sh starts one)");
        }
        QTemporaryDir dir;
        MainWindow window(test::windowOptions(dir.filePath("runs.sqlite"), test::tinyConfig()));
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        const QRect available = window.screen()->availableGeometry();
        // The frame arrives from the window manager after the window is shown.
        QTRY_VERIFY2_WITH_TIMEOUT(window.frameGeometry() != window.geometry(),
                                  "the window manager framed nothing", 20000);
        QTRY_VERIFY2_WITH_TIMEOUT(
            available.contains(window.frameGeometry()),
            qPrintable(QStringLiteral("frame %1x%2+%3+%4 outside the free area %5x%6")
                           .arg(window.frameGeometry().width())
                           .arg(window.frameGeometry().height())
                           .arg(window.frameGeometry().x())
                           .arg(window.frameGeometry().y())
                           .arg(available.width())
                           .arg(available.height())),
            5000);
        QStatusBar* status = window.statusBar();
        const QRect statusOnScreen(status->mapToGlobal(QPoint(0, 0)), status->size());
        QVERIFY(available.contains(statusOnScreen));
        // Most of the screen is used: the window is not made small to fit.
        QVERIFY(window.frameGeometry().height() > available.height() * 9 / 10);
    }
};

OOMLAB_UI_TEST_MAIN(WindowManagerTest)
#include "window_manager_test.moc"
