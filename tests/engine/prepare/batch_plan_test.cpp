// The plans of which examples a run trains together, and the batches a run will draw: what
// the estimator predicts a run's peak from.
#include "oomlab/prepare/batch_plan.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace oomlab::prepare {
namespace {

// 100 examples of 1 to 10 tokens, and one of 50 at `long_one`.
std::vector<int> lengths_with_one_long(int long_one) {
    std::vector<int> lengths(100);
    for (int i = 0; i < 100; ++i) {
        lengths[i] = i % 10 + 1;
    }
    lengths[long_one] = 50;
    return lengths;
}

ExperimentConfig config_of(int batch, int accumulation, int max_steps, int epochs = 1) {
    ExperimentConfig config;
    config.train.batch_size = batch;
    config.train.accumulation = accumulation;
    config.train.max_steps = max_steps;
    config.train.epochs = epochs;
    config.train.max_len = 64;
    config.train.padding = Padding::Dynamic;
    return config;
}

// The longest padded batch of the first `count` micro-batches of `epoch`'s plan.
int longest_of_first(const std::vector<int>& lengths, const ExperimentConfig& config, int epoch,
                     std::size_t count, int world_size = 1) {
    const ExampleLength length = [&](std::int64_t i) { return lengths[i]; };
    const BatchPlan plan = shard_plan(
        plan_batches(static_cast<std::int64_t>(lengths.size()), length, config.train.batch_size,
                     config.train.padding, config.train.seed, epoch),
        config.train.batch_size, 0, world_size);
    std::int64_t longest = 1;
    for (std::size_t i = 0; i < std::min(count, plan.size()); ++i) {
        longest = std::max(
            longest, padded_length(length, plan[i], config.train.padding, config.train.max_len));
    }
    return static_cast<int>(longest);
}

// The step the long example falls in, for a seed whose first step does not draw it.
int long_one_missing_from_first_step(const ExperimentConfig& config) {
    for (int long_one = 0; long_one < 100; ++long_one) {
        if (longest_of_first(lengths_with_one_long(long_one), config, 1, 1) < 50) {
            return long_one;
        }
    }
    return -1;
}

TEST(RunBatches, AShortRunIsAsLongAsTheBatchesItDraws) {
    const ExperimentConfig config = config_of(10, 1, 1);
    const int long_one = long_one_missing_from_first_step(config);
    ASSERT_GE(long_one, 0);
    const std::vector<int> lengths = lengths_with_one_long(long_one);
    const RunBatches run = run_batches(config, lengths, 1);
    EXPECT_EQ(run.worst, 50);
    EXPECT_EQ(run.longest, longest_of_first(lengths, config, 1, 1));
    EXPECT_LE(run.longest, 10);
}

TEST(RunBatches, AccumulationDrawsThatManyMicroBatchesAStep) {
    const ExperimentConfig config = config_of(5, 2, 3);
    const std::vector<int> lengths = lengths_with_one_long(7);
    EXPECT_EQ(run_batches(config, lengths, 1).longest, longest_of_first(lengths, config, 1, 6));
}

TEST(RunBatches, AWholeEpochDrawsTheWorstBatch) {
    const std::vector<int> lengths =
        lengths_with_one_long(long_one_missing_from_first_step(config_of(10, 1, 1)));
    EXPECT_EQ(run_batches(config_of(10, 1, 0, 1), lengths, 1).longest, 50);
    // 10 steps an epoch: the 12th is in the second; the first is whole.
    EXPECT_EQ(run_batches(config_of(10, 1, 12), lengths, 1).longest, 50);
}

TEST(RunBatches, SeveralRanksPredictTheFirstRanksShare) {
    const ExperimentConfig config = config_of(10, 1, 0, 1);
    for (int long_one = 0; long_one < 100; ++long_one) {
        const std::vector<int> lengths = lengths_with_one_long(long_one);
        EXPECT_EQ(run_batches(config, lengths, 2).longest,
                  longest_of_first(lengths, config, 1, 100, 2))
            << long_one;
    }
}

TEST(RunBatches, FixedPaddingMakesEveryBatchMaxLen) {
    ExperimentConfig config = config_of(10, 1, 1);
    config.train.padding = Padding::Fixed;
    const RunBatches run = run_batches(config, lengths_with_one_long(3), 1);
    EXPECT_EQ(run.longest, 64);
    EXPECT_EQ(run.worst, 64);
}

TEST(ShardPlan, TheShortBatchIsLeftOutWhereverBucketingPutIt) {
    const BatchPlan plan{{0, 1, 2, 3}, {4, 5}, {6, 7, 8, 9}, {10, 11, 12, 13}, {14, 15, 16, 17}};
    EXPECT_EQ(shard_plan(plan, 4, 0, 2), (BatchPlan{{0, 1, 2, 3}, {10, 11, 12, 13}}));
    EXPECT_EQ(shard_plan(plan, 4, 1, 2), (BatchPlan{{6, 7, 8, 9}, {14, 15, 16, 17}}));
}

}  // namespace
}  // namespace oomlab::prepare
