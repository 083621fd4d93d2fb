// What a class predicted for each lesson, for the class window once the lecturer reveals it:
// a bar an answer with its count, what the students' runs measured, who was off.
#pragma once

#include <QString>

#include <vector>

#include "oomlab/lessons/class_predictions.h"

namespace oomlab::ui {

// Rich text, one section a lesson; `barColor` the bars' colour.
QString predictionTallyHtml(const std::vector<LessonTally>& tallies, const QString& barColor);

// "12 students predicted for batch-size": what the status says before the reveal.
QString predictionsWaiting(const std::vector<LessonTally>& tallies);

}  // namespace oomlab::ui
