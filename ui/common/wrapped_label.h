// A word-wrapped label that asks for the height its text takes at its width. A plain wrapped
// QLabel's minimum height is one line, so a layout short of room squeezes the widgets under
// it past their minimum when the text wraps onto more lines (a long header in presentation
// mode).
#pragma once

#include <QLabel>

namespace oomlab::ui {

class WrappedLabel : public QLabel {
    Q_OBJECT

public:
    explicit WrappedLabel(const QString& text = {}, QWidget* parent = nullptr);

    QSize minimumSizeHint() const override;
    // As tall as the minimum: QLabel's own hint wraps at a width of its choosing, narrower
    // than the one it has, and a layout with room to spare gave it that height (blank lines).
    QSize sizeHint() const override;
    // Its height is in its minimum size instead: a layout with a height-for-width item is
    // sized to its preferred height in a scroll area (QScrollArea), and would always scroll.
    bool hasHeightForWidth() const override { return false; }

protected:
    void resizeEvent(QResizeEvent* event) override;
    void changeEvent(QEvent* event) override;
};

}  // namespace oomlab::ui
