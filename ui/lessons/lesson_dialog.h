// A lesson before it runs: its explanation, the runs it will train with the settings each
// changes, and what it should show. "Run the lesson" trains them one after another and
// opens the compare view with the claims checked.
#pragma once

#include <QDialog>

#include "oomlab/lessons/lesson.h"

namespace oomlab::ui {

class LessonDialog : public QDialog {
    Q_OBJECT

public:
    explicit LessonDialog(const Lesson& lesson, QWidget* parent = nullptr);
};

}  // namespace oomlab::ui
