// Where a run's time goes: every moment counts for exactly one part, an interlude (measuring,
// recording) hands the time back to the part it interrupted, and the totals come in a step's
// order whatever order the parts came in.
#include "train/phase_times.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace oomlab::train {
namespace {

double seconds_of(const std::vector<PartTime>& totals, std::string_view part) {
    for (const PartTime& total : totals) {
        if (total.part == part) {
            return total.seconds;
        }
    }
    return -1;
}

TEST(PhaseTimes, EachMomentCountsForOnePartInAStepsOrder) {
    using std::chrono::milliseconds;
    const auto started = std::chrono::steady_clock::now();
    PhaseTimes times;
    times.switch_to(part::kBackward);
    std::this_thread::sleep_for(milliseconds(20));
    {
        const PhaseTimes::Interlude measuring(times, part::kMeasurement);
        std::this_thread::sleep_for(milliseconds(10));
    }
    std::this_thread::sleep_for(milliseconds(20));  // backward again
    times.switch_to(part::kForward);
    std::this_thread::sleep_for(milliseconds(5));
    const std::vector<PartTime> totals = times.totals();
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

    ASSERT_EQ(totals.size(), 4u);  // setup (the moment before the first switch) included
    EXPECT_EQ(totals[0].part, part::kSetup);
    EXPECT_EQ(totals[1].part, part::kForward);
    EXPECT_EQ(totals[2].part, part::kBackward);
    EXPECT_EQ(totals[3].part, part::kMeasurement);
    EXPECT_GE(seconds_of(totals, part::kBackward), 0.040);
    EXPECT_GE(seconds_of(totals, part::kMeasurement), 0.010);
    EXPECT_GE(seconds_of(totals, part::kForward), 0.005);
    double sum = 0;
    for (const PartTime& total : totals) {
        sum += total.seconds;
    }
    EXPECT_LE(sum, elapsed);  // nothing counted twice
}

}  // namespace
}  // namespace oomlab::train
