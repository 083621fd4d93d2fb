#include "common/zoom_style.h"

#include <QApplication>

#include <cmath>

namespace oomlab::ui {

void ZoomStyle::apply(double zoom) {
    auto* style = qobject_cast<ZoomStyle*>(QApplication::style());
    if (!style) {
        style = new ZoomStyle;
        QApplication::setStyle(style);
    }
    style->m_zoom = zoom;
}

int ZoomStyle::pixelMetric(PixelMetric metric, const QStyleOption* option,
                           const QWidget* widget) const {
    const int size = QProxyStyle::pixelMetric(metric, option, widget);
    switch (metric) {
        case PM_IndicatorWidth:
        case PM_IndicatorHeight:
        case PM_ExclusiveIndicatorWidth:
        case PM_ExclusiveIndicatorHeight:
            return int(std::lround(size * m_zoom));
        default:
            return size;
    }
}

}  // namespace oomlab::ui
