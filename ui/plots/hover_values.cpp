#include "plots/hover_values.h"

#include <QCoreApplication>

#include <cmath>
#include <optional>

#include <qcustomplot.h>

namespace oomlab::ui {
namespace {

// The point of `data` (sorted by key) whose key is nearest to `x`.
std::optional<QCPGraphData> nearestPoint(const QCPGraphDataContainer& data, double x) {
    if (data.isEmpty()) {
        return std::nullopt;
    }
    auto after = data.findBegin(x, false);  // the first point at or after x
    if (after == data.constEnd()) {
        return *(after - 1);
    }
    if (after != data.constBegin() && x - (after - 1)->key < after->key - x) {
        return *(after - 1);
    }
    return *after;
}

// Half the distance between the points around `x`: a sparse series (validation every 50
// steps) still answers between its points.
double nearestGap(const QCPGraphDataContainer& data, double x) {
    auto after = data.findBegin(x, false);
    if (after == data.constEnd() || after == data.constBegin()) {
        return 0;
    }
    return (after->key - (after - 1)->key) / 2;
}

// A value as its axis reads: "7.21 MiB", "45.5 %", "1.234", "120".
QString formatAxisValue(double value, const QString& axisLabel) {
    if (axisLabel == QLatin1String("MiB")) {
        return QStringLiteral("%1 MiB").arg(value, 0, 'f', 2);
    }
    if (axisLabel.contains('%')) {
        return QStringLiteral("%1 %").arg(value, 0, 'f', 1);
    }
    if (value == std::round(value) && std::abs(value) < 1e9) {
        return QString::number(static_cast<qint64>(value));
    }
    return QString::number(value, 'g', 4);
}

}  // namespace

QString hoverValues(const QCustomPlot& plot, const QPointF& pixel, int tolerancePixels) {
    const QCPAxis* xAxis = plot.xAxis;
    if (!plot.axisRect()->rect().contains(pixel.toPoint())) {
        return {};
    }
    const double x = xAxis->pixelToCoord(pixel.x());
    const double tolerance = std::abs(xAxis->pixelToCoord(pixel.x() + tolerancePixels) - x);
    QStringList lines;
    std::optional<double> headerKey;
    for (int i = 0; i < plot.graphCount(); ++i) {
        const QCPGraph* series = plot.graph(i);
        if (!series->visible() || series->data()->isEmpty()) {
            continue;
        }
        const std::optional<QCPGraphData> point = nearestPoint(*series->data(), x);
        if (!point ||
            std::abs(point->key - x) > std::max(tolerance, nearestGap(*series->data(), x))) {
            continue;
        }
        if (!headerKey) {
            headerKey = point->key;
        }
        QString line = QStringLiteral("%1: %2").arg(
            series->name(), formatAxisValue(point->value, series->valueAxis()->label()));
        if (std::abs(point->key - *headerKey) > tolerance) {
            line += QCoreApplication::translate("ThemedPlot", " (at %1)")
                        .arg(formatAxisValue(point->key, QString()));
        }
        lines << line;
    }
    if (!headerKey) {
        return {};
    }
    lines.prepend(QStringLiteral("<b>%1 %2</b>")
                      .arg(xAxis->label().toHtmlEscaped(), formatAxisValue(*headerKey, QString())));
    for (int i = 1; i < lines.size(); ++i) {
        lines[i] = lines[i].toHtmlEscaped();
    }
    return lines.join(QStringLiteral("<br>"));
}

}  // namespace oomlab::ui
