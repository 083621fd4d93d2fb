#include "common/zoom_style.h"

#include <QApplication>
#include <QStyleFactory>

#include <cmath>

namespace oomlab::ui {

ZoomStyle::ZoomStyle(QStyle* base) : QProxyStyle(base) {}

void ZoomStyle::apply(double zoom) {
    auto* style = qobject_cast<ZoomStyle*>(QApplication::style());
    if (!style) {
        // Fusion unless the person chose a style: every layout and menu width is tested at
        // each zoom in Fusion, and a desktop's own style (KDE's Breeze, a GNOME theme's) sizes
        // menus and panels its own way (a menu item was seen cut short at a zoom, in a style
        // that shortens text with "…", which Fusion never does).
        QStyle* base = qEnvironmentVariableIsEmpty("QT_STYLE_OVERRIDE")
                           ? QStyleFactory::create(QStringLiteral("Fusion"))
                           : nullptr;
        style = new ZoomStyle(base);
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
