#include "plots/legend_entry.h"

#include <QFontMetrics>

#include <algorithm>

namespace oomlab::ui {
namespace {

// A plottable's legend icon, which QCustomPlot lets only its own legend item draw: the
// member is named through a derived class, where its protected access allows it, and called
// on the plottable as it is.
struct LegendIcon : QCPAbstractPlottable {
    static void draw(const QCPAbstractPlottable& plottable, QCPPainter* painter,
                     const QRectF& rect) {
        (plottable.*(&LegendIcon::drawLegendIcon))(painter, rect);
    }
};

}  // namespace

LegendEntry::LegendEntry(QCPLegend* legend, QCPAbstractPlottable* plottable)
    : QCPPlottableLegendItem(legend, plottable) {}

void LegendEntry::setMaxTextWidth(int pixels) {
    m_maxTextWidth = std::max(0, pixels);
}

QString LegendEntry::shownText() const {
    const QString name = mPlottable->name();
    if (m_maxTextWidth <= 0) {
        return name;
    }
    return QFontMetrics(getFont()).elidedText(name, Qt::ElideRight, m_maxTextWidth);
}

int LegendEntry::chromeWidth() const {
    return mParentLegend->iconSize().width() + mParentLegend->iconTextPadding() + mMargins.left() +
           mMargins.right();
}

QSize LegendEntry::minimumOuterSizeHint() const {
    const QFontMetrics metrics(getFont());
    const QSize icon = mParentLegend->iconSize();
    const int height = std::max(metrics.height(), icon.height());
    return {chromeWidth() + metrics.horizontalAdvance(shownText()),
            height + mMargins.top() + mMargins.bottom()};
}

void LegendEntry::draw(QCPPainter* painter) {
    // The icon (and its border) as QCustomPlot draws it, the text elided to fit. The base
    // class's draw() is not called under a clip to the icon: its whole name came out beside
    // the elided one in SVG, whose generator does not clip text.
    const QFontMetrics metrics(getFont());
    const QSize icon = mParentLegend->iconSize();
    const QRect iconRect(mRect.topLeft(), icon);
    painter->save();
    painter->setClipRect(iconRect, Qt::IntersectClip);
    LegendIcon::draw(*mPlottable, painter, iconRect);
    painter->restore();
    if (getIconBorderPen().style() != Qt::NoPen) {
        painter->save();
        painter->setPen(getIconBorderPen());
        painter->setBrush(Qt::NoBrush);
        painter->drawRect(iconRect);
        painter->restore();
    }
    const int textLeft = iconRect.right() + 1 + mParentLegend->iconTextPadding();
    painter->setFont(getFont());
    painter->setPen(QPen(getTextColor()));
    painter->drawText(QRect(textLeft, mRect.top(), mRect.right() - textLeft + 1,
                            std::max(metrics.height(), icon.height())),
                      Qt::AlignLeft | Qt::AlignVCenter, shownText());
}

}  // namespace oomlab::ui
