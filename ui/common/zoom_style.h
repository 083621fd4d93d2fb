// The application's style with its indicators (check boxes, radio buttons) grown with the
// text: Qt sizes them in pixels, so at a projector's 1.6x text they stayed at a desk's size
// beside it. Everything else is Fusion's (the style of every layout test), or the style set
// in QT_STYLE_OVERRIDE.
#pragma once

#include <QProxyStyle>

namespace oomlab::ui {

class ZoomStyle : public QProxyStyle {
    Q_OBJECT

public:
    // `base` is owned by the style; null: the application's default style.
    explicit ZoomStyle(QStyle* base = nullptr);

    // The application's style from now on, made once (QApplication owns it); `zoom` the text's
    // size against the desk's. Set before the text's size changes: the change of font lays
    // every widget out again, with these sizes.
    static void apply(double zoom);

    int pixelMetric(PixelMetric metric, const QStyleOption* option = nullptr,
                    const QWidget* widget = nullptr) const override;

private:
    double m_zoom = 1.0;
};

}  // namespace oomlab::ui
