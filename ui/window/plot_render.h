// One plot of a saved run drawn straight into a file, without a window: what
// `oomlab --export-plot RUN --view VIEW --out FILE` does on a server without a display.
#pragma once

#include <QSize>
#include <QString>

namespace oomlab::ui {

struct PlotExport {
    QString databasePath;
    qint64 runId = 0;
    QString view;  // "loss", "memory", "phases" or "breakdown"
    QString file;  // .png, .svg or .pdf
    QSize size{1200, 700};
    bool force = false;  // replace an existing file that is not an image
};

// The views export knows, for messages and --help.
QString plotExportViews();

// Draws the plot with the run's name as its title and writes it. Returns the error, if any.
QString exportRunPlot(const PlotExport& request);

}  // namespace oomlab::ui
