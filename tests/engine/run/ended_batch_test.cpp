// Whether a run adapted its batch (on_oom=halve or adapt), the one rule the Runs table and the
// live page both show: what counts as a change, and what a run that recorded none ended with.
#include "oomlab/run/ended_batch.h"

#include <gtest/gtest.h>

namespace oomlab {
namespace {

RunOutcome ended_with(int batch_size, int accumulation) {
    RunOutcome outcome;
    outcome.batch_size = batch_size;
    outcome.accumulation = accumulation;
    return outcome;
}

void expect_shape(const BatchShape& shape, int batch_size, int accumulation) {
    EXPECT_EQ(shape.batch_size, batch_size);
    EXPECT_EQ(shape.accumulation, accumulation);
}

TEST(EndedBatch, TheBatchItPlannedIsNoAdaptation) {
    EXPECT_FALSE(batch_adapted(ended_with(64, 1), {64, 1}));
    EXPECT_FALSE(batch_adapted(ended_with(16, 4), {16, 4}));
    expect_shape(ended_batch(ended_with(16, 4), {16, 4}), 16, 4);
}

// on_oom=halve halves the micro-batch; on_oom=adapt also doubles the accumulation, which keeps
// the effective batch but is a change all the same.
TEST(EndedBatch, AnotherMicroBatchOrAccumulationIsAnAdaptation) {
    EXPECT_TRUE(batch_adapted(ended_with(32, 1), {64, 1}));
    expect_shape(ended_batch(ended_with(32, 1), {64, 1}), 32, 1);
    EXPECT_TRUE(batch_adapted(ended_with(16, 4), {64, 1}));
    expect_shape(ended_batch(ended_with(16, 4), {64, 1}), 16, 4);
    EXPECT_TRUE(batch_adapted(ended_with(64, 2), {64, 1}));
    EXPECT_TRUE(batch_adapted(ended_with(8, 8), {16, 4}));
}

// A run that failed before training, or one saved before the batch was kept, recorded no
// micro-batch (0): it shows the batch it planned, whatever its accumulation reads.
TEST(EndedBatch, ARunThatRecordedNoMicroBatchDidNotAdapt) {
    EXPECT_FALSE(batch_adapted(ended_with(0, 0), {64, 1}));
    EXPECT_FALSE(batch_adapted(ended_with(0, 4), {64, 1}));
    expect_shape(ended_batch(ended_with(0, 0), {64, 2}), 64, 2);
}

// An accumulation not recorded (0) is one micro-batch a step, as the config's default.
TEST(EndedBatch, AnAccumulationOfZeroIsOne) {
    EXPECT_FALSE(batch_adapted(ended_with(64, 0), {64, 1}));
    expect_shape(ended_batch(ended_with(64, 0), {64, 1}), 64, 1);
    EXPECT_TRUE(batch_adapted(ended_with(32, 0), {64, 1}));
    expect_shape(ended_batch(ended_with(32, 0), {64, 1}), 32, 1);
    EXPECT_TRUE(batch_adapted(ended_with(64, 0), {64, 4}));
}

}  // namespace
}  // namespace oomlab
