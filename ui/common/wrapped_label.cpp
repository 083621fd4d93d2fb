#include "common/wrapped_label.h"

#include <QEvent>
#include <QResizeEvent>

#include <algorithm>

namespace oomlab::ui {

WrappedLabel::WrappedLabel(const QString& text, QWidget* parent) : QLabel(text, parent) {
    setWordWrap(true);
}

QSize WrappedLabel::minimumSizeHint() const {
    // setText asks the layouts again (updateGeometry); so do a new width and a new font.
    return {QLabel::minimumSizeHint().width(), heightForWidth(std::max(1, width()))};
}

QSize WrappedLabel::sizeHint() const {
    return {QLabel::sizeHint().width(), minimumSizeHint().height()};
}

void WrappedLabel::resizeEvent(QResizeEvent* event) {
    QLabel::resizeEvent(event);
    if (event->size().width() != event->oldSize().width()) {
        updateGeometry();
    }
}

void WrappedLabel::changeEvent(QEvent* event) {
    QLabel::changeEvent(event);
    if (event->type() == QEvent::FontChange) {
        updateGeometry();
    }
}

}  // namespace oomlab::ui
