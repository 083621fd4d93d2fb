// Saves a plot as PNG, PDF or SVG, chosen by the file's extension.
#pragma once

#include <QString>
#include <QStringList>

class QCustomPlot;

namespace oomlab::ui {

// Name filters for a file dialog ("PNG image (*.png)", ...), SVG only where it is built in.
QString plotFileFilters();
bool svgExportAvailable();

// Returns an empty string on success, else what went wrong. PNGs are written at twice the
// widget's resolution so they stay sharp on HiDPI screens and in documents.
QString savePlot(QCustomPlot* plot, const QString& path);

}  // namespace oomlab::ui
