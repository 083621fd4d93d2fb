// The engine's lessons (oomlab/lessons/lesson.h) as the menu and the dialog show them, and
// the value struct a finished lesson sends from the training thread.
#pragma once

#include <QString>
#include <QStringList>
#include <QVector>

#include "common/run_types.h"
#include "oomlab/lessons/lesson.h"

namespace oomlab::ui {

struct LessonCatalog {
    QString folder;
    std::vector<Lesson> lessons;
    QString error;       // the engine's message when the folder cannot be read
    QStringList broken;  // each lesson file that does not read: why (file, line and key)
};

// Reads the installed lessons (lessons_folder()); never throws.
LessonCatalog loadLessonCatalog();

// "train.batch_size=32  train.accumulation=4"
QString settingsText(const Settings& settings);
// The lesson as HTML: explanation, base settings, each run's settings, the claims.
QString lessonHtml(const Lesson& lesson);
// What a class reads before it predicts: the title, the settings of every run and each run's
// own; no explanation and no claim, which would give the answer away.
QString lessonSetupHtml(const Lesson& lesson);
// The explanation's paragraphs, for after the prediction.
QString lessonExplanationHtml(const Lesson& lesson);

// "✓ activations: 4 x 32 is 0.27 x batch 128 (claim: at most 0.35 x)" lines as HTML.
QString lessonEndHtml(const LessonEnd& end);

}  // namespace oomlab::ui
