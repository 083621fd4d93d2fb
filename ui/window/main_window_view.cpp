// Where the window sits on the screen and how large its text is: fitting the screen on a
// first start and the window manager's frame once it is known, and the zoom of presentation
// mode.
#include <QApplication>
#include <QDockWidget>
#include <QScreen>
#include <QShowEvent>
#include <QTimer>
#include <QToolTip>

#include <algorithm>

#include "common/app_settings.h"
#include "common/zoom_style.h"
#include "plots/line_scale.h"
#include "plots/themed_plot.h"
#include "window/main_window.h"

namespace oomlab::ui {

void MainWindow::fitScreen() {
    // The screen's free area (without the desktop's panels), less room for the title bar and
    // the frame, which the window manager adds outside the window.
    const QRect available = screen()->availableGeometry();
    const QRect room = available.adjusted(8, 40, -8, -8);
    resize(size().boundedTo(room.size()));
    if (!room.contains(geometry())) {
        move(room.x() + (room.width() - width()) / 2, room.y() + (room.height() - height()) / 2);
    }
}

void MainWindow::fitFrameToScreen() {
    if (isMaximized() || isFullScreen() || !screen()) {
        return;
    }
    const QRect available = screen()->availableGeometry();
    const QRect frame = frameGeometry();
    // No frame yet (or none at all, without a window manager): nothing learned since the
    // window was sized to fit before it was shown. A size set since it was shown was chosen
    // (by the user, or a program placing it) and is kept.
    if (frame == geometry() || available.contains(frame) || size() != m_sizeWhenShown) {
        return;
    }
    placeFrameWithin(available);
    m_sizeWhenShown = size();
}

void MainWindow::placeFrameWithin(const QRect& available) {
    const QSize decoration = frameGeometry().size() - size();
    resize(size().boundedTo(available.size() - decoration));
    const QSize framed = size() + decoration;
    move(available.x() + std::max(0, (available.width() - framed.width()) / 2),
         available.y() + std::max(0, (available.height() - framed.height()) / 2));
}

void MainWindow::keepFrameOnScreen() {
    // Without a display (offscreen: screenshots and tests at sizes of their choosing) or a
    // window manager's frame, there is no screen the window must be kept on.
    if (!isVisible() || isMaximized() || isFullScreen() || !screen() ||
        frameGeometry() == geometry() || QGuiApplication::platformName() == "offscreen") {
        return;
    }
    const QRect available = screen()->availableGeometry();
    if (!available.contains(frameGeometry())) {
        placeFrameWithin(available);
    }
}

void MainWindow::showEvent(QShowEvent* event) {
    QMainWindow::showEvent(event);
    if (m_frameFitted) {
        return;
    }
    m_frameFitted = true;
    m_sizeWhenShown = size();
    // The window manager frames and places the window after it is shown, and says how large
    // the frame is only then: with openbox on a 768 px screen the guessed room put the status
    // bar below the screen. Checked again as the frame arrives; a frame that fits is left.
    for (const int ms : {50, 300, 1000}) {
        QTimer::singleShot(ms, this, &MainWindow::fitFrameToScreen);
    }
}

void MainWindow::setZoom(double factor) {
    m_zoom = std::clamp(factor, 0.7, 2.5);
    QToolTip::hideText();  // drawn at the old size, it would stay there clipped
    ZoomStyle::apply(m_zoom);
    QFont font = m_baseFont;
    font.setPointSizeF(m_baseFont.pointSizeF() * m_zoom);
    QApplication::setFont(font);
    if (m_saveSession) {
        AppSettings::setValue(QStringLiteral("view/zoom"), m_zoom);
    }
    // Larger text grows the window to what its widgets need, and it did not shrink back when
    // the text did: after each change, once the layouts have settled, its frame is brought
    // back onto the screen (as far as the widgets' least sizes let it).
    QTimer::singleShot(0, this, &MainWindow::keepFrameOnScreen);
}

void MainWindow::setPresentationMode(bool on) {
    const bool changes = on != m_presenting;
    m_presenting = on;
    // The panel goes before the text grows and comes back after it shrinks: never the large
    // text beside the panel, which would need more than the screen for a moment and leave
    // the window grown.
    if (changes && on) {
        m_experimentDock->hide();
    }
    setLineScale(on ? 2.5 : 1.0);
    resetZoom();
    if (changes && !on) {
        m_experimentDock->show();
    }
    if (m_saveSession) {
        AppSettings::setValue(QStringLiteral("view/presentation"), on);
    }
    if (changes) {
        emit presentationModeChanged(on);
    }
}

void MainWindow::resetZoom() {
    setZoom(m_presenting ? kPresentationZoom : 1.0);
}

}  // namespace oomlab::ui
