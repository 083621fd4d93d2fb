// What a class predicted for a lesson, against what each student's runs measured: read from
// the runs the students' lessons sent to the class's MLflow server (each carries its student's
// prediction, lesson_prediction.h), one answer a student, their latest.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "oomlab/lessons/lesson_prediction.h"
#include "oomlab/trackers/mlflow_class.h"

namespace oomlab {

struct StudentPrediction {
    std::string student;
    LessonAnswer predicted;
    // What their runs measured, once every run of their lesson ended; nullopt before.
    std::optional<LessonAnswer> measured;
};

struct LessonTally {
    std::string lesson;
    LessonAsks asks;
    std::vector<StudentPrediction> students;  // by name

    // Each answer given and how many gave it, the most given first.
    std::vector<std::pair<std::string, std::size_t>> predicted_counts() const;
    // The same of what the students' runs measured (those whose runs all ended).
    std::vector<std::pair<std::string, std::size_t>> measured_counts() const;
    // The students whose runs measured other than they predicted.
    std::vector<const StudentPrediction*> disagreeing() const;
};

// Whether a prediction matches what was measured: the run, and the second answer where it
// was measured (a lesson whose runs all completed says nothing about free memory).
bool agrees(const LessonAnswer& predicted, const LessonAnswer& measured);

// Every lesson the class's runs carry predictions for, by name.
std::vector<LessonTally> class_predictions(const trackers::ClassProgress& progress);

// The tally as the lecturer reads it: the counts of the answers, what was measured, who
// disagrees ("6 students predicted batch-size:\n  4  batch 128 needs the most, ...").
std::string describe(const LessonTally& tally);

}  // namespace oomlab
