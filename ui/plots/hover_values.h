// What the cursor points at on a plot, as its hover tip shows it: the x value and each visible
// series' value nearest to it ("optimizer step 120 · training loss: 1.234").
#pragma once

#include <QPointF>
#include <QString>

class QCustomPlot;

namespace oomlab::ui {

// Rich text for a tool tip at `pixel`; empty outside the axes or where no series is within
// `tolerancePixels` (or half the gap between a sparse series' points) of it.
QString hoverValues(const QCustomPlot& plot, const QPointF& pixel, int tolerancePixels);

}  // namespace oomlab::ui
