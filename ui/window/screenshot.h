// `oomlab --screenshot FILE [--screenshot-view live|compare]`: trains a short default run
// (or, for the compare view, a small lesson of contrasting runs), renders the window to a
// PNG and quits. Used for the README's pictures and to check the GUI without a display.
#pragma once

#include <QString>

namespace oomlab::ui {

class MainWindow;

struct ScreenshotRequest {
    QString file;
    QString view = QStringLiteral("live");  // "live", "runs" or "compare"
    int timeoutMs = 120000;
};

// Starts the runs and arranges for the window to be saved and the application to quit
// (exit code 0 on success, 1 on failure or timeout). Returns an error for a bad request.
QString scheduleScreenshot(MainWindow* window, const ScreenshotRequest& request);

// Renders the whole window (all pages laid out at its current size) into `file`.
bool saveWindowImage(MainWindow* window, const QString& file);

}  // namespace oomlab::ui
