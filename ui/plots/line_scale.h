// How much wider than given every plot draws its series: presentation mode's lines for the back
// of a room. One scale for the whole workbench.
#pragma once

#include <QPen>

class QCustomPlot;
class QCPAbstractPlottable;

namespace oomlab::ui {

// Takes effect on each plot at its next palette or font change (the zoom changes the font).
void setLineScale(double scale);
double lineScale();
// Sets a series' pen, `pen`'s width being its width at a line scale of 1.
void setSeriesPen(QCPAbstractPlottable* series, QPen pen);
// Every series of `plot` set with setSeriesPen, at the current scale.
void rescaleSeriesPens(QCustomPlot& plot);

}  // namespace oomlab::ui
