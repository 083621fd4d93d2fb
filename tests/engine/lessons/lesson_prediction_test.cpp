// A class's predictions: what a lesson asks, what its runs measured, the answer as a student
// types it and as a tracker carries it, and the class's tally against what was measured.
#include <gtest/gtest.h>

#include "oomlab/common/errors.h"
#include "oomlab/lessons/class_predictions.h"
#include "oomlab/lessons/lesson_prediction.h"

namespace oomlab {
namespace {

LessonAsks mostMemory() {
    return lesson_asks(find_or_load_lesson("batch-size"));
}

TEST(LessonPrediction, ALessonAsksByWhatItsClaimsSay) {
    const LessonAsks most = mostMemory();
    EXPECT_EQ(most.question, LessonQuestion::MostMemory);
    EXPECT_EQ(most.labels, (std::vector<std::string>{"batch 16", "batch 128"}));
    EXPECT_TRUE(most.second());
    const LessonAsks leak = lesson_asks(find_or_load_lesson("loss-graph-leak"));
    EXPECT_EQ(leak.question, LessonQuestion::WhichCompletes);
    EXPECT_FALSE(leak.free_memory);
    EXPECT_TRUE(lesson_asks(find_or_load_lesson("fragmentation")).free_memory);
}

TEST(LessonPrediction, TheRunsMeasureAnAnswer) {
    const LessonAsks most = mostMemory();
    double ratio = 0;
    EXPECT_EQ(
        measured_answer(most, {{100, RunStatus::Completed}, {400, RunStatus::Completed}}, &ratio),
        (LessonAnswer{1, 2}));
    EXPECT_DOUBLE_EQ(ratio, 4.0);
    EXPECT_EQ(measured_answer(most, {{100, RunStatus::Completed}, {120, RunStatus::Completed}}),
              (LessonAnswer{LessonAnswer::kAboutTheSame, 0}));
    EXPECT_EQ(measured_answer(most, {{100, RunStatus::Completed}}).run, LessonAnswer::kNotChosen)
        << "a run missing measures nothing";

    LessonAsks completes{LessonQuestion::WhichCompletes, true, {"plain", "expandable"}};
    EXPECT_EQ(measured_answer(completes, {{9, RunStatus::Oom, true}, {9, RunStatus::Completed}}),
              (LessonAnswer{1, 1}));
    EXPECT_EQ(measured_answer(completes, {{9, RunStatus::Oom}, {9, RunStatus::Oom}}),
              (LessonAnswer{LessonAnswer::kNoRun, 0}));
    EXPECT_EQ(measured_answer(completes, {{9, RunStatus::Completed}, {9, RunStatus::Completed}}),
              (LessonAnswer{LessonAnswer::kEveryRun, -1}))
        << "nothing ran out of memory: the free memory was not measured";
}

TEST(LessonPrediction, AnAnswerIsTypedAndSaidInTheSameWords) {
    const LessonAsks most = mostMemory();
    const LessonAnswer answer = parse_answer(most, "batch 128,over-3x", "--predict");
    EXPECT_EQ(answer, (LessonAnswer{1, 2}));
    EXPECT_EQ(answer_text(most, answer), "batch 128 needs the most, more than 3 times the least");
    EXPECT_EQ(parse_answer(most, "same,under-1.5x", "--predict"),
              (LessonAnswer{LessonAnswer::kAboutTheSame, 0}));
    try {
        parse_answer(most, "batch 64,over-3x", "--predict");
        FAIL() << "a run the lesson does not have";
    } catch (const BadInput& error) {
        EXPECT_NE(std::string(error.what()).find("\"batch 16\", \"batch 128\""), std::string::npos)
            << error.what();
    }
    EXPECT_THROW(parse_answer(most, "batch 16", "--predict"), BadInput) << "how much is asked";
    const LessonAsks leak = lesson_asks(find_or_load_lesson("loss-graph-leak"));
    EXPECT_EQ(parse_answer(leak, "correct", "--predict"), (LessonAnswer{0, -1}));
    EXPECT_EQ(answer_text(leak, LessonAnswer{LessonAnswer::kEveryRun, -1}), "every run completes");
}

TEST(LessonPrediction, ATrackerCarriesThePredictionWithEachRun) {
    const Lesson lesson = find_or_load_lesson("batch-size");
    const auto tags = lesson_tags(lesson, 1, LessonAnswer{0, 1});
    const std::optional<TaggedPrediction> read = tagged_prediction(tags);
    ASSERT_TRUE(read);
    EXPECT_EQ(read->lesson, "batch-size");
    EXPECT_EQ(read->run, 1u);
    EXPECT_EQ(read->asks.labels, mostMemory().labels);
    EXPECT_EQ(read->predicted, (LessonAnswer{0, 1}));
    auto broken = tags;
    broken["oomlab.prediction"] = "{\"question\": 3}";
    EXPECT_FALSE(tagged_prediction(broken));
    broken = tags;
    broken["oomlab.lesson_run"] = "7";  // past the lesson's runs
    EXPECT_FALSE(tagged_prediction(broken));
    EXPECT_FALSE(tagged_prediction({}));
}

// A student's two lesson runs as the class's server holds them.
void addStudent(trackers::ClassProgress& progress, const std::string& student,
                const LessonAnswer& predicted, std::int64_t small, std::int64_t large,
                bool ended = true) {
    const Lesson lesson = find_or_load_lesson("batch-size");
    for (std::size_t run = 0; run < 2; ++run) {
        trackers::ClassRun one;
        one.student = student;
        one.whole = ended || run == 0;
        one.status = one.whole ? RunStatus::Completed : RunStatus::Running;
        one.peak_bytes = run == 0 ? small : large;
        one.lesson_tags = lesson_tags(lesson, run, predicted);
        progress.runs.push_back(one);
    }
}

TEST(ClassPredictions, CountsEachStudentOnceAgainstTheirOwnRuns) {
    trackers::ClassProgress progress;
    addStudent(progress, "ann", LessonAnswer{1, 2}, 100, 800);
    addStudent(progress, "bob", LessonAnswer{1, 2}, 100, 800);
    addStudent(progress, "cy", LessonAnswer{LessonAnswer::kAboutTheSame, 0}, 100, 800);
    addStudent(progress, "dee", LessonAnswer{1, 1}, 100, 800, /*ended=*/false);
    addStudent(progress, "bob", LessonAnswer{1, 1}, 100, 800);  // ran it again: the latest counts
    progress.runs.push_back(trackers::ClassRun{});              // a run of no lesson
    const std::vector<LessonTally> tallies = class_predictions(progress);
    ASSERT_EQ(tallies.size(), 1u);
    const LessonTally& tally = tallies[0];
    EXPECT_EQ(tally.lesson, "batch-size");
    ASSERT_EQ(tally.students.size(), 4u);
    const auto predicted = tally.predicted_counts();
    ASSERT_EQ(predicted.size(), 3u);
    EXPECT_EQ(predicted[0],
              std::make_pair(std::string("batch 128 needs the most, 1.5 to 3 times the least"),
                             std::size_t(2)));
    const auto measured = tally.measured_counts();
    ASSERT_EQ(measured.size(), 1u) << "dee's second run has not ended";
    EXPECT_EQ(measured[0].second, 3u);
    std::vector<std::string> disagreeing;
    for (const StudentPrediction* student : tally.disagreeing()) {
        disagreeing.push_back(student->student);
    }
    EXPECT_EQ(disagreeing, (std::vector<std::string>{"bob", "cy"}));
    const std::string said = describe(tally);
    EXPECT_NE(said.find("batch-size: 4 students predicted"), std::string::npos) << said;
    EXPECT_NE(said.find("measured, by 3 students' runs:\n  3  batch 128 needs the most, more "
                        "than 3 times the least"),
              std::string::npos)
        << said;
    EXPECT_NE(said.find("2 students' runs disagree"), std::string::npos) << said;
}

}  // namespace
}  // namespace oomlab
