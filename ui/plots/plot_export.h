// Saves a plot as PNG, PDF or SVG, chosen by the file's extension.
#pragma once

#include <QString>
#include <QStringList>

class QCustomPlot;

namespace oomlab::ui {

// Name filters for a file dialog ("PNG image (*.png)", ...), SVG only where it is built in.
QString plotFileFilters();
bool svgExportAvailable();

// Returns an empty string on success, else what went wrong. PNGs are written at `pngScale`
// times the widget's size: twice by default, so they stay sharp on HiDPI screens and in
// documents; 1 for an exact pixel size.
QString savePlot(QCustomPlot* plot, const QString& path, double pngScale = 2.0);

}  // namespace oomlab::ui
