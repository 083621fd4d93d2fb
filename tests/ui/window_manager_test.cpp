// The first start under a real window manager (openbox on Xvfb, started by
// with_window_manager.sh at the screen size it is given): the window, its frame included, fits
// the free area of the screen, so the status bar (progress, time left) is on it.
#include <QApplication>
#include <QMenu>
#include <QMenuBar>
#include <QScreen>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <memory>

#include "ui_test_support.h"
#include "window/main_window.h"

using namespace oomlab::ui;

class WindowManagerTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;

    // A workbench shown and framed by the window manager; null (and the test failed) if not.
    std::unique_ptr<MainWindow> framedWindow() {
        auto window = std::make_unique<MainWindow>(
            test::windowOptions(m_dir.filePath("runs.sqlite"), test::tinyConfig()));
        window->show();
        if (!QTest::qWaitForWindowExposed(window.get())) {
            return nullptr;
        }
        // The frame arrives from the window manager after the window is shown.
        const bool framed =
            QTest::qWaitFor([&] { return window->frameGeometry() != window->geometry(); }, 20000);
        return framed ? std::move(window) : nullptr;
    }

private slots:
    void init() {
        if (QGuiApplication::platformName() != QLatin1String("xcb")) {
            QSKIP("needs a window manager on an X display (with_window_manager.sh starts one)");
        }
    }

    void firstStartFitsTheScreenFrameIncluded() {
        const std::unique_ptr<MainWindow> shown = framedWindow();
        QVERIFY2(shown, "the window manager framed nothing");
        MainWindow& window = *shown;
        const QRect available = window.screen()->availableGeometry();
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

    // Presentation mode, two steps larger, then back (F5, Ctrl+=, Ctrl+=, F5) or the zoom
    // reset: the window grew past a 768 px screen and stayed so. Now its frame is back on
    // the screen's free area each time.
    void leavingPresentationOrResettingTheZoomFitsTheScreen() {
        const std::unique_ptr<MainWindow> shown = framedWindow();
        QVERIFY2(shown, "the window manager framed nothing");
        MainWindow& window = *shown;
        const QRect available = window.screen()->availableGeometry();
        const auto onScreen = [&] {
            const QRect frame = window.frameGeometry();
            return QStringLiteral("frame %1x%2+%3+%4, free area %5x%6")
                .arg(frame.width())
                .arg(frame.height())
                .arg(frame.x())
                .arg(frame.y())
                .arg(available.width())
                .arg(available.height());
        };
        for (const double back : {1.0, 1.0 * 1.1}) {
            window.setPresentationMode(true);
            window.setZoom(MainWindow::kPresentationZoom * 1.1);
            window.setZoom(MainWindow::kPresentationZoom * 1.21);
            QTest::qWait(300);
            window.setPresentationMode(false);  // F5, then one step larger or not
            window.setZoom(back);
            QTRY_VERIFY2_WITH_TIMEOUT(available.contains(window.frameGeometry()),
                                      qPrintable(onScreen()), 5000);
        }
        window.setZoom(1.0);
    }

    // Every menu opened on a projector (presentation mode, then two steps larger): as wide as
    // its items need, each item's text whole ("Find the largest ba… size under the cap" was
    // seen at zoom).
    void everyMenuIsWideEnoughForItsItemsAtEachZoom() {
        const std::unique_ptr<MainWindow> shown = framedWindow();
        QVERIFY2(shown, "the window manager framed nothing");
        MainWindow& window = *shown;
        for (const double zoom :
             {1.0, MainWindow::kPresentationZoom, MainWindow::kPresentationZoom * 1.21}) {
            window.setPresentationMode(zoom > 1.0);
            window.setZoom(zoom);
            QTest::qWait(200);
            for (QAction* entry : window.menuBar()->actions()) {
                if (QMenu* menu = entry->menu()) {
                    checkMenuWidth(menu, window.mapToGlobal(QPoint(0, 0)), zoom);
                    if (QTest::currentTestFailed()) {
                        return;
                    }
                }
            }
        }
        window.setPresentationMode(false);
        window.setZoom(1.0);
    }

private:
    // Pops `menu` up at `at` and checks that each item has room for its text and its
    // shortcut, and the menu its hinted width; then each submenu, popped up beside it.
    void checkMenuWidth(QMenu* menu, QPoint at, double zoom) {
        const auto actions = menu->actions();
        if (std::none_of(actions.begin(), actions.end(),
                         [](const QAction* item) { return item->isVisible(); })) {
            return;  // an empty menu (no recent files yet) is not shown
        }
        menu->popup(at);
        QVERIFY2(QTest::qWaitForWindowExposed(menu), qPrintable(menu->title()));
        QTest::qWait(50);
        QVERIFY2(menu->width() >= menu->sizeHint().width(),
                 qPrintable(QStringLiteral("zoom %1: %2 is %3 px, it needs %4")
                                .arg(zoom)
                                .arg(menu->title())
                                .arg(menu->width())
                                .arg(menu->sizeHint().width())));
        const QFontMetrics metrics = menu->fontMetrics();
        for (QAction* item : menu->actions()) {
            if (item->isSeparator() || !item->isVisible()) {
                continue;
            }
            const QString text = QString(item->text()).remove(QLatin1Char('&'));
            const QString shortcut = item->shortcut().toString(QKeySequence::NativeText);
            const int needed = metrics.horizontalAdvance(text) +
                               (shortcut.isEmpty() ? 0 : metrics.horizontalAdvance(shortcut));
            const int room = menu->actionGeometry(item).width();
            QVERIFY2(room >= needed,
                     qPrintable(QStringLiteral("zoom %1: \"%2\" (%3) needs %4 px, its item is "
                                               "%5 px, the menu %6 of %7 hinted")
                                    .arg(zoom)
                                    .arg(text, shortcut)
                                    .arg(needed)
                                    .arg(room)
                                    .arg(menu->width())
                                    .arg(menu->sizeHint().width())));
            if (QMenu* submenu = item->menu()) {
                checkMenuWidth(submenu, menu->mapToGlobal(menu->actionGeometry(item).topRight()),
                               zoom);
                if (QTest::currentTestFailed()) {
                    return;
                }
            }
        }
        menu->hide();
    }
};

OOMLAB_UI_TEST(WindowManagerTest)
#include "window_manager_test.moc"
