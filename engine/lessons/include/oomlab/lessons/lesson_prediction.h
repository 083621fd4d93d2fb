// What a class predicts before a lesson's runs train, and what the runs then measured, in one
// vocabulary: the workbench's prediction page asks it, the reveal answers it, and a class's
// MLflow server carries each student's answer with their runs (the tags of lesson_tags), so
// that the lecturer's class view counts the answers against what was measured.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "oomlab/lessons/lesson.h"

namespace oomlab {

// Where every run is meant to finish: which run needs the most memory at its peak, and by how
// much against the least. Where a run is meant to run out of memory (its peak is its cap, not
// its need): which runs complete, and, where a claim is about fragmentation, how the
// allocator's free memory lies when one fails.
enum class LessonQuestion { MostMemory, WhichCompletes };

struct LessonAsks {
    LessonQuestion question = LessonQuestion::MostMemory;
    bool free_memory = false;         // WhichCompletes: the second question too
    std::vector<std::string> labels;  // the runs, in order
    bool second() const { return question == LessonQuestion::MostMemory || free_memory; }
};
LessonAsks lesson_asks(const Lesson& lesson);

// An answer: `run` is a run's index (the one needing the most; the only one completing) or one
// of the constants; `second` the ratio band (0: under 1.5x, 1: 1.5x to 3x, 2: over 3x) or the
// free memory at the out-of-memory (0: less than the request asked for, 1: more, in pieces
// too small), -1 where not asked or not chosen.
struct LessonAnswer {
    static constexpr int kAboutTheSame = -1;
    static constexpr int kNotChosen = -2;
    static constexpr int kEveryRun = -3;
    static constexpr int kNoRun = -4;
    int run = kNotChosen;
    int second = -1;
    bool operator==(const LessonAnswer& other) const {
        return run == other.run && second == other.second;
    }
};

// The band of a ratio of peaks, as the prediction offers them.
int ratio_band(double ratio);

// How one of the lesson's runs ended.
struct LessonRunFacts {
    std::int64_t peak_bytes = 0;
    RunStatus status = RunStatus::Completed;
    bool fragmented = false;  // its out-of-memory: more free than asked for, in pieces
};
// What the runs measured, as an answer to what the lesson asks (a run out of step with the
// lesson's runs, or none, gives kNotChosen). `ratio`: the most's peak over the least's.
LessonAnswer measured_answer(const LessonAsks& asks, const std::vector<LessonRunFacts>& runs,
                             double* ratio = nullptr);

// "batch 128 needs the most, 1.5 to 3 times the least"; "only plain completes; the free
// memory: more than asked for, in pieces too small".
std::string answer_text(const LessonAsks& asks, const LessonAnswer& answer);
// An answer as typed (`lesson run --predict`): a run's label (or "same"; "every", "none"),
// then, where asked, after a comma: "under-1.5x", "1.5x-3x", "over-3x"; "full", "pieces".
// BadInput naming the option and the choices otherwise.
LessonAnswer parse_answer(const LessonAsks& asks, const std::string& text,
                          const std::string& option);

// The tags a lesson's run carries to a tracker: the lesson, the run's place in it, and the
// student's prediction (with what was asked, so that a reader needs no copy of the lesson).
std::map<std::string, std::string> lesson_tags(const Lesson& lesson, std::size_t run,
                                               const LessonAnswer& predicted);

// A lesson run's prediction read back from those tags; nullopt for a run of no lesson, or
// tags that do not read as one.
struct TaggedPrediction {
    std::string lesson;
    std::size_t run = 0;
    LessonAsks asks;
    LessonAnswer predicted;
};
std::optional<TaggedPrediction> tagged_prediction(const std::map<std::string, std::string>& tags);

}  // namespace oomlab
