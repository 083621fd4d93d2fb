// A legend entry that shortens its text with "…" to the width it is allowed, so a narrow
// plot shows every entry whole instead of cutting some off. The series keeps its full name
// (the hover text shows it).
#pragma once

#include <QString>

#include <qcustomplot.h>

namespace oomlab::ui {

class LegendEntry : public QCPPlottableLegendItem {
    Q_OBJECT

public:
    LegendEntry(QCPLegend* legend, QCPAbstractPlottable* plottable);

    // The most pixels the text may take; 0: the whole name.
    void setMaxTextWidth(int pixels);
    int maxTextWidth() const { return m_maxTextWidth; }
    // The text as drawn: the series' name, elided to the allowed width.
    QString shownText() const;
    // Everything but the text: the icon, the gap after it and the margins.
    int chromeWidth() const;
    QSize minimumOuterSizeHint() const override;

protected:
    void draw(QCPPainter* painter) override;

private:
    int m_maxTextWidth = 0;
};

}  // namespace oomlab::ui
