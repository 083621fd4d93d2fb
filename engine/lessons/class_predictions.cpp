#include "oomlab/lessons/class_predictions.h"

#include <algorithm>
#include <map>

#include "oomlab/common/format.h"

namespace oomlab {
namespace {

std::vector<std::pair<std::string, std::size_t>> most_first(
    const std::map<std::string, std::size_t>& counts) {
    std::vector<std::pair<std::string, std::size_t>> sorted(counts.begin(), counts.end());
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    return sorted;
}

// A student's lesson as their runs say it: the prediction of the latest, each run's end.
struct StudentLesson {
    LessonAsks asks;
    LessonAnswer predicted;
    std::map<std::size_t, const trackers::ClassRun*> runs;  // by place in the lesson
};

}  // namespace

bool agrees(const LessonAnswer& predicted, const LessonAnswer& measured) {
    return predicted.run == measured.run &&
           (measured.second < 0 || predicted.second == measured.second);
}

std::vector<std::pair<std::string, std::size_t>> LessonTally::predicted_counts() const {
    std::map<std::string, std::size_t> counts;
    for (const StudentPrediction& student : students) {
        ++counts[answer_text(asks, student.predicted)];
    }
    return most_first(counts);
}

std::vector<std::pair<std::string, std::size_t>> LessonTally::measured_counts() const {
    std::map<std::string, std::size_t> counts;
    for (const StudentPrediction& student : students) {
        if (student.measured) {
            ++counts[answer_text(asks, *student.measured)];
        }
    }
    return most_first(counts);
}

std::vector<const StudentPrediction*> LessonTally::disagreeing() const {
    std::vector<const StudentPrediction*> found;
    for (const StudentPrediction& student : students) {
        if (student.measured && !agrees(student.predicted, *student.measured)) {
            found.push_back(&student);
        }
    }
    return found;
}

std::vector<LessonTally> class_predictions(const trackers::ClassProgress& progress) {
    // lesson -> student -> their lesson; runs oldest first, so a lesson run again replaces.
    std::map<std::string, std::map<std::string, StudentLesson>> lessons;
    for (const trackers::ClassRun& run : progress.runs) {
        const std::optional<TaggedPrediction> tagged = tagged_prediction(run.lesson_tags);
        if (!tagged) {
            continue;
        }
        StudentLesson& student = lessons[tagged->lesson][run.student];
        if (tagged->run == 0 || student.asks.labels != tagged->asks.labels) {
            student = StudentLesson{tagged->asks, tagged->predicted, {}};
        }
        student.predicted = tagged->predicted;
        student.runs[tagged->run] = &run;
    }
    std::vector<LessonTally> tallies;
    for (const auto& [name, students] : lessons) {
        LessonTally tally;
        tally.lesson = name;
        for (const auto& [student, lesson] : students) {
            tally.asks = lesson.asks;
            StudentPrediction prediction{student, lesson.predicted, std::nullopt};
            std::vector<LessonRunFacts> facts;
            for (std::size_t i = 0; i < lesson.asks.labels.size(); ++i) {
                const auto run = lesson.runs.find(i);
                if (run == lesson.runs.end() || !run->second->whole) {
                    break;  // not all ended yet: nothing measured
                }
                facts.push_back(
                    {run->second->peak_bytes, run->second->status, run->second->fragmented});
            }
            if (facts.size() == lesson.asks.labels.size()) {
                prediction.measured = measured_answer(lesson.asks, facts);
            }
            tally.students.push_back(std::move(prediction));
        }
        tallies.push_back(std::move(tally));
    }
    return tallies;
}

std::string describe(const LessonTally& tally) {
    std::string text =
        tally.lesson + ": " + counted(tally.students.size(), "student") + " predicted\n";
    for (const auto& [answer, count] : tally.predicted_counts()) {
        text += "  " + std::to_string(count) + "  " + answer + "\n";
    }
    const auto measured = tally.measured_counts();
    std::size_t ended = 0;
    for (const auto& [answer, count] : measured) {
        ended += count;
    }
    text += "measured, by " + counted(ended, "student") + (ended == 1 ? "'s" : "'") + " runs:\n";
    if (measured.empty()) {
        text += "  (no student's lesson has ended yet)\n";
    }
    for (const auto& [answer, count] : measured) {
        text += "  " + std::to_string(count) + "  " + answer + "\n";
    }
    const auto disagreeing = tally.disagreeing();
    text += counted(disagreeing.size(), "student") + (disagreeing.size() == 1 ? "'s" : "'") +
            " runs disagree with their prediction" + (disagreeing.empty() ? "" : ":") + "\n";
    for (const StudentPrediction* student : disagreeing) {
        text += "  " + student->student + ": predicted " +
                answer_text(tally.asks, student->predicted) + "; measured " +
                answer_text(tally.asks, *student->measured) + "\n";
    }
    return text;
}

}  // namespace oomlab
