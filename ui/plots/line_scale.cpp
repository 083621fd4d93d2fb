#include "plots/line_scale.h"

#include <qcustomplot.h>

namespace oomlab::ui {
namespace {

double g_lineScale = 1.0;  // the GUI thread's only

// The width a series was given at a scale of 1, kept on the series itself.
constexpr const char* kBaseWidth = "baseWidth";

}  // namespace

void setLineScale(double scale) {
    g_lineScale = scale;
}

double lineScale() {
    return g_lineScale;
}

void setSeriesPen(QCPAbstractPlottable* series, QPen pen) {
    series->setProperty(kBaseWidth, pen.widthF());
    pen.setWidthF(pen.widthF() * g_lineScale);
    series->setPen(pen);
}

void rescaleSeriesPens(QCustomPlot& plot) {
    for (int i = 0; i < plot.plottableCount(); ++i) {
        QCPAbstractPlottable* series = plot.plottable(i);
        const QVariant baseWidth = series->property(kBaseWidth);
        if (baseWidth.isValid()) {
            QPen pen = series->pen();
            pen.setWidthF(baseWidth.toDouble() * g_lineScale);
            series->setPen(pen);
        }
    }
}

}  // namespace oomlab::ui
