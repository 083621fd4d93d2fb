// A lesson before it runs: its explanation and the runs it will train, each with the
// settings it changes. "Run the lesson" trains them one after another and opens the
// compare view.
#pragma once

#include <QDialog>

#include "lessons/lesson_library.h"

namespace oomlab::ui {

class LessonDialog : public QDialog {
    Q_OBJECT

public:
    explicit LessonDialog(const Lesson& lesson, QWidget* parent = nullptr);
};

}  // namespace oomlab::ui
