// The class's median line of the live class view: at each step, over the runs that reached it.
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

}  // namespace
}  // namespace oomlab::trackers
