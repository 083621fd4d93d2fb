// The live class view's figures without a server: the class's median line (at each step, over
// the runs that reached it), and each run's state as it is said, a silent one too.
#include <gtest/gtest.h>

#include "oomlab/trackers/mlflow_class.h"

namespace oomlab::trackers {
namespace {

std::vector<const StepSeries*> of(const std::vector<StepSeries>& runs) {
    std::vector<const StepSeries*> pointers;
    for (const StepSeries& run : runs) {
        pointers.push_back(&run);
    }
    return pointers;
}

TEST(ClassMedian, IsTheMiddleRunsValueAtEachStep) {
    const std::vector<StepSeries> runs = {
        {{0, 1.0}, {10, 0.5}}, {{0, 3.0}, {10, 1.5}}, {{0, 2.0}, {10, 9.0}}};
    const StepSeries median = class_median(of(runs), 11);
    ASSERT_EQ(median.size(), 11u);
    EXPECT_EQ(median.front().step, 0);
    EXPECT_DOUBLE_EQ(median.front().value, 2.0);
    // Between two points a run keeps its last value: 1.0, 3.0, 2.0 until step 10.
    EXPECT_DOUBLE_EQ(median[5].value, 2.0);
    EXPECT_EQ(median.back().step, 10);
    EXPECT_DOUBLE_EQ(median.back().value, 1.5);
}

TEST(ClassMedian, OfAnEvenCountIsTheMeanOfTheMiddleTwo) {
    const std::vector<StepSeries> runs = {{{0, 1.0}}, {{0, 4.0}}, {{0, 2.0}}, {{0, 10.0}}};
    const StepSeries median = class_median(of(runs), 5);
    ASSERT_EQ(median.size(), 1u);  // one step reached: one point, however many were asked
    EXPECT_DOUBLE_EQ(median[0].value, 3.0);
}

TEST(ClassMedian, LeavesOutARunPastItsLastStep) {
    // The run out of memory at step 4 no longer pulls the median after it.
    const std::vector<StepSeries> runs = {
        {{0, 100.0}, {4, 100.0}}, {{0, 1.0}, {8, 1.0}}, {{0, 3.0}, {8, 3.0}}};
    const StepSeries median = class_median(of(runs), 9);
    ASSERT_EQ(median.size(), 9u);
    EXPECT_DOUBLE_EQ(median[4].value, 3.0);  // 1, 3, 100
    EXPECT_DOUBLE_EQ(median[5].value, 2.0);  // 1, 3
    EXPECT_EQ(median[5].step, 5);
}

TEST(ClassMedian, IsEmptyWithoutAValue) {
    const std::vector<StepSeries> runs = {{}, {}};
    EXPECT_TRUE(class_median(of(runs)).empty());
    EXPECT_TRUE(class_median({}).empty());
}

ClassRun runOf(const std::string& student, RunStatus status, std::int64_t last_ms) {
    ClassRun run;
    run.student = student;
    run.status = status;
    run.last_ms = last_ms;
    return run;
}

TEST(ClassState, ARunRunningWithoutAStepForOverAMinuteIsSilent) {
    constexpr std::int64_t kNow = 1800000000000;
    EXPECT_EQ(class_state(runOf("a", RunStatus::Running, kNow - 5000), kNow), "running");
    EXPECT_EQ(class_state(runOf("a", RunStatus::Running, kNow - 3 * 60000 - 1), kNow),
              "running, no step for 3 min");
    EXPECT_EQ(class_state(runOf("a", RunStatus::Running, kNow - 2 * 3600000), kNow),
              "running, no step for 2 h");
    EXPECT_EQ(class_state(runOf("a", RunStatus::Running, 0), kNow), "running")
        << "no step yet: still preparing";
    EXPECT_EQ(class_state(runOf("a", RunStatus::Oom, kNow - 3600000), kNow), "out of memory");

    ClassProgress progress;
    progress.runs = {
        runOf("a", RunStatus::Running, kNow - 1000), runOf("b", RunStatus::Running, kNow - 120000),
        runOf("b", RunStatus::Completed, kNow - 120000), runOf("c", RunStatus::Oom, kNow)};
    EXPECT_EQ(class_counts(progress, kNow),
              "4 runs from 3 students: 1 running, 1 completed, 1 out of memory, 1 silent "
              "(running, no step for over a minute)");
}

}  // namespace
}  // namespace oomlab::trackers
