// The window as a first start opens it, on the screen the test process has (the offscreen
// platform, configured per test with a screen of 1024×768, 1366×768 or 1920×1080): nothing is
// resized by the test. It must fit the screen's free area, frame and all, and use the room it
// has up to its preferred 1440×900.
#include <QScreen>
#include <QtTest>

#include "ui_test_support.h"
#include "window/main_window.h"

using namespace oomlab::ui;

class FirstStartTest : public QObject {
    Q_OBJECT

private slots:
    void theWindowFitsTheScreenItOpensOn() {
        MainWindow window;  // the saved settings are empty: a first start
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        const QRect available = window.screen()->availableGeometry();
        const QRect frame = window.frameGeometry();
        QVERIFY2(available.contains(frame),
                 qPrintable(QStringLiteral("the window %1x%2 at %3,%4 (frame) on a %5x%6 screen")
                                .arg(frame.width())
                                .arg(frame.height())
                                .arg(frame.x())
                                .arg(frame.y())
                                .arg(available.width())
                                .arg(available.height())));
        // Not shrunk past need: within 80 px of the screen, or at its preferred size.
        QVERIFY(window.width() >= std::min(1440, available.width() - 80));
        QVERIFY(window.height() >= std::min(900, available.height() - 80));
    }

    // A window saved on a larger screen comes back within this one.
    void aWindowSavedOnALargerScreenIsBroughtIn() {
        {
            MainWindow larger;
            larger.resize(2400, 1500);
            larger.move(600, 400);
            larger.close();  // saves its geometry
        }
        MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.screen()->availableGeometry().contains(window.frameGeometry()));
    }
};

OOMLAB_UI_TEST(FirstStartTest)

#include "first_start_test.moc"
