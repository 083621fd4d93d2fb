// A spin box or combo box in a scrolling form takes the mouse wheel only once the user has
// chosen it (a click or Tab); until then the wheel scrolls the form past it and changes
// nothing, as well-behaved forms do.
#pragma once

#include <QWheelEvent>
#include <QWidget>

namespace oomlab::ui {

template <typename Control>
class ChosenBeforeWheeled : public Control {
public:
    explicit ChosenBeforeWheeled(QWidget* parent = nullptr) : Control(parent) {
        this->setFocusPolicy(Qt::StrongFocus);  // not Qt::WheelFocus: the wheel never chooses it
    }

protected:
    void wheelEvent(QWheelEvent* event) override {
        if (this->hasFocus()) {
            Control::wheelEvent(event);
        } else {
            event->ignore();  // on to the scroll area
        }
    }
};

}  // namespace oomlab::ui
