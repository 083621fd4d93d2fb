// A spin box or combo box in a scrolling form never takes the mouse wheel: the wheel scrolls
// the form, and a setting changes only by a click, a key or typing. A box that took the wheel
// once chosen took it again when scrolling brought it under a still pointer, and changed what
// the user only scrolled past.
#pragma once

#include <QWheelEvent>
#include <QWidget>

namespace oomlab::ui {

template <typename Control>
class WheelPassesOn : public Control {
public:
    explicit WheelPassesOn(QWidget* parent = nullptr) : Control(parent) {
        this->setFocusPolicy(Qt::StrongFocus);  // not Qt::WheelFocus: the wheel never chooses it
    }

protected:
    void wheelEvent(QWheelEvent* event) override {
        event->ignore();  // on to the scroll area
    }
};

}  // namespace oomlab::ui
