// The window's keys as a lecturer presses them, on the real window: the zoom keys in and out
// of presentation mode, and the menus' Alt keys.
#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QDockWidget>
#include <QMenu>
#include <QProxyStyle>
#include <QRadioButton>
#include <QStyleFactory>
#include <QTemporaryDir>
#include <QToolTip>
#include <QtTest>

#include "ui_test_support.h"
#include "window/main_menus.h"
#include "window/main_window.h"

using namespace oomlab;
using namespace oomlab::ui;

class ShortcutsTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::unique_ptr<MainWindow> m_window;

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        // A desktop whose style is not Fusion (as KDE's Breeze is not).
        QApplication::setStyle(QStyleFactory::create(QStringLiteral("Windows")));
        m_window = test::shownWindow(m_dir.filePath("runs.sqlite"));
        QVERIFY(m_window);
    }

    // The window is drawn in Fusion, the style its layouts and menus are tested in at each
    // zoom, whatever the desktop's style (QT_STYLE_OVERRIDE still chooses another).
    void theWindowIsDrawnInFusionWhateverTheDesktopsStyle() {
        const auto* style = qobject_cast<const QProxyStyle*>(QApplication::style());
        QVERIFY(style);
        QCOMPARE(style->baseStyle()->name(), QStringLiteral("fusion"));
    }

    // The zoom keys as a lecturer presses them: Ctrl+- zooms out (it was bound twice, which Qt
    // refuses as ambiguous, and did nothing), and Actual size (Ctrl+0) goes back to
    // presentation mode's own 1.6x while presenting instead of leaving the mode.
    void zoomKeysWorkInAndOutOfPresentationMode() {
        MainWindow* window = m_window.get();
        window->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(window));
        QTest::keyClick(window, Qt::Key_Minus, Qt::ControlModifier);
        QVERIFY2(window->zoom() < 0.9, qPrintable(QString::number(window->zoom())));
        QTest::keyClick(window, Qt::Key_0, Qt::ControlModifier);
        QCOMPARE(window->zoom(), 1.0);

        QTest::keyClick(window, Qt::Key_F5);
        QVERIFY(window->presentationMode());
        QCOMPARE(window->zoom(), MainWindow::kPresentationZoom);
        QTest::keyClick(window, Qt::Key_Minus, Qt::ControlModifier);
        QVERIFY(window->zoom() < MainWindow::kPresentationZoom);
        QVERIFY2(window->presentationMode(), "zooming out keeps presentation mode");
        QVERIFY(!window->findChild<QDockWidget*>(QStringLiteral("experimentDock"))->isVisible());
        QTest::keyClick(window, Qt::Key_0, Qt::ControlModifier);
        QCOMPARE(window->zoom(), MainWindow::kPresentationZoom);
        QVERIFY(window->presentationMode());
        QVERIFY(window->findChild<QAction*>(QStringLiteral("presentationMode"))->isChecked());

        QTest::keyClick(window, Qt::Key_F5);
        QVERIFY(!window->presentationMode());
        QCOMPARE(window->zoom(), 1.0);
        QVERIFY(window->findChild<QDockWidget*>(QStringLiteral("experimentDock"))->isVisible());
    }

    // The indicators of check boxes and radio buttons grow with the text (Qt sizes them in
    // pixels: on the lesson's prediction page at 1.6x they were a desk's 13 px beside 1.6x
    // text), and come back with it.
    void checkAndRadioIndicatorsGrowWithTheText() {
        MainWindow* window = m_window.get();
        QRadioButton radio(QStringLiteral("batch 128"), window);
        QCheckBox check(QStringLiteral("Fine-tune the table"), window);
        const auto sizes = [&] {
            return QSize(
                radio.style()->pixelMetric(QStyle::PM_ExclusiveIndicatorWidth, nullptr, &radio),
                check.style()->pixelMetric(QStyle::PM_IndicatorWidth, nullptr, &check));
        };
        QVERIFY(!window->presentationMode());
        const QSize desk = sizes();
        const int deskHint = radio.sizeHint().height();
        QTest::keyClick(window, Qt::Key_F5);
        QApplication::processEvents();
        QCOMPARE(sizes(), QSize(qRound(desk.width() * MainWindow::kPresentationZoom),
                                qRound(desk.height() * MainWindow::kPresentationZoom)));
        QVERIFY(radio.sizeHint().height() > deskHint);
        QTest::keyClick(window, Qt::Key_F5);
        QVERIFY(!window->presentationMode());
        QCOMPARE(sizes(), desk);
    }

    // A tooltip shown before the text's size changes goes with it (F5 left one drawn at the
    // old size, clipped).
    void aTooltipShownBeforeAZoomGoesWithIt() {
        MainWindow* window = m_window.get();
        QToolTip::showText(window->mapToGlobal(QPoint(40, 40)), QStringLiteral("a long tip"),
                           window);
        QTRY_VERIFY(QToolTip::isVisible());
        QTest::keyClick(window, Qt::Key_F5);
        QTRY_VERIFY(!QToolTip::isVisible());
        QTest::keyClick(window, Qt::Key_F5);
        QVERIFY(!window->presentationMode());
    }

    // Alt+L opens the Lessons menu: the Live tab had the same key, and took it.
    void altLOpensTheLessonsMenu() {
        MainWindow* window = m_window.get();
        window->showPage(MainWindow::RunsTab);
        window->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(window));
        QTest::keyClick(window, Qt::Key_L, Qt::AltModifier);
        QTRY_COMPARE(QApplication::activePopupWidget(),
                     static_cast<QWidget*>(window->menus()->lessonsMenu()));
        QApplication::activePopupWidget()->close();
        QCOMPARE(window->tabs()->currentIndex(), int(MainWindow::RunsTab));
    }
};

OOMLAB_UI_TEST(ShortcutsTest)
#include "shortcuts_test.moc"
