// BatchSchedule on its own: a tiny prepared experiment, its plans and the OOM policy's halving.
#include "train/batch_schedule.h"

#include <gtest/gtest.h>

#include <numeric>
#include <set>

#include "oomlab/prepare/data_profile.h"
#include "train/prepared_experiment.h"

namespace oomlab::train {
namespace {

PreparedExperiment tiny_experiment(int examples, int batch_size, int accumulation) {
    PreparedExperiment experiment;
    experiment.config.train.batch_size = batch_size;
    experiment.config.train.accumulation = accumulation;
    experiment.config.train.epochs = 2;
    for (int i = 0; i < examples; ++i) {
        experiment.train_examples.ids.push_back(2 + i);
        experiment.train_examples.offsets.push_back(i + 1);
        experiment.train_examples.labels.push_back(i % 2);
    }
    experiment.info.total_steps = 2 * steps_per_epoch(examples, batch_size, accumulation);
    return experiment;
}

std::vector<std::int64_t> flattened(const BatchPlan& plan) {
    std::vector<std::int64_t> all;
    for (const auto& batch : plan) {
        all.insert(all.end(), batch.begin(), batch.end());
    }
    return all;
}

TEST(BatchSchedule, AnEpochPlansEveryExampleOnceInBatchesOfTheSize) {
    const PreparedExperiment experiment = tiny_experiment(10, 4, 1);
    BatchSchedule schedule(experiment);
    schedule.plan_epoch(1, 0, 1);
    const BatchPlan plan = schedule.rest();
    ASSERT_EQ(plan.size(), 3u);  // 4 + 4 + 2
    std::vector<std::int64_t> all = flattened(plan);
    std::sort(all.begin(), all.end());
    std::vector<std::int64_t> expected(10);
    std::iota(expected.begin(), expected.end(), 0);
    EXPECT_EQ(all, expected);
    schedule.advance(2);
    EXPECT_EQ(schedule.left(), 1u);
    EXPECT_EQ(schedule.rest(), BatchPlan(plan.begin() + 2, plan.end()));
}

TEST(BatchSchedule, TwoRanksShareAnEpochWithoutOverlap) {
    const PreparedExperiment experiment = tiny_experiment(16, 4, 1);
    BatchSchedule first(experiment);
    BatchSchedule second(experiment);
    first.plan_epoch(1, 0, 2);
    second.plan_epoch(1, 1, 2);
    EXPECT_EQ(first.left(), 2u);
    EXPECT_EQ(second.left(), 2u);
    const std::vector<std::int64_t> a = flattened(first.rest());
    const std::vector<std::int64_t> second_examples = flattened(second.rest());
    const std::set<std::int64_t> b(second_examples.begin(), second_examples.end());
    EXPECT_EQ(a.size() + b.size(), 16u);
    for (const std::int64_t example : a) {
        EXPECT_EQ(b.count(example), 0u) << "example " << example << " on both ranks";
    }
}

TEST(BatchSchedule, AdaptHalvesTheRestAndKeepsTheEffectiveBatch) {
    const PreparedExperiment experiment = tiny_experiment(16, 4, 1);
    BatchSchedule schedule(experiment);
    schedule.plan_epoch(1, 0, 1);
    schedule.advance(1);  // one step of 4 done
    const std::vector<std::int64_t> rest_before = flattened(schedule.rest());
    const std::string action =
        schedule.halve(/*keep_effective_batch=*/true, /*steps_done=*/1, /*epoch=*/1, 1);
    EXPECT_EQ(action, "micro-batch 4 -> 2, accumulation 1 -> 2 (same effective batch)");
    EXPECT_EQ(schedule.batch_size(), 2);
    EXPECT_EQ(schedule.accumulation(), 2);
    EXPECT_EQ(flattened(schedule.rest()), rest_before);  // the same examples, in order
    EXPECT_EQ(schedule.left(), 6u);
    // 1 done + 3 left in this epoch (6 micro-batches of 2) + 4 in the next (16 / 2 / 2).
    EXPECT_EQ(schedule.total_steps(), 1 + 3 + 4);
}

TEST(BatchSchedule, HalveWithoutAdaptHalvesTheBatchOnly) {
    const PreparedExperiment experiment = tiny_experiment(16, 4, 2);
    BatchSchedule schedule(experiment);
    schedule.plan_epoch(2, 0, 1);  // the last epoch
    EXPECT_EQ(schedule.halve(false, 0, 2, 1), "batch 4 -> 2");
    EXPECT_EQ(schedule.accumulation(), 2);
    EXPECT_EQ(schedule.left(), 8u);
    EXPECT_EQ(schedule.total_steps(), 4);  // 8 micro-batches of 2 in steps of 2
}

TEST(BatchSchedule, RecountsTheStepsOfOneRankOfSeveral) {
    const PreparedExperiment experiment = tiny_experiment(16, 4, 1);
    BatchSchedule schedule(experiment);
    schedule.plan_epoch(1, 0, 2);  // 2 of the 4 micro-batches are this rank's
    schedule.halve(true, 0, 1, 2);
    // This epoch: 4 micro-batches of 2 -> 2 steps; the next: 16 / 2 ranks / 2 / 2 = 2.
    EXPECT_EQ(schedule.total_steps(), 2 + 2);
}

TEST(BatchSchedule, RepeatedPlansTheSameBatch) {
    const PreparedExperiment experiment = tiny_experiment(8, 4, 1);
    BatchSchedule schedule(experiment);
    schedule.plan_repeated({7, 6, 5}, 3);
    EXPECT_EQ(schedule.rest(), BatchPlan(3, std::vector<std::int64_t>{7, 6, 5}));
}

// The estimator predicts a run's batches from the data's profile: its lengths must be the
// encoded examples', in their order, whichever way the profile was read.
TEST(BatchSchedule, TheProfilesLengthsAreTheTrainedExamplesInOrder) {
    ExperimentConfig config;
    config.device = "cpu";
    config.embeddings.source = EmbeddingSource::Synthetic;
    config.train.max_len = 12;
    const PreparedExperiment experiment = prepare_experiment(config, PrepareOptions{});
    const prepare::EncodedExamples& examples = experiment.train_examples;
    for (const std::vector<int>& lengths :
         {experiment.info.profile.lengths, profile_data(config).lengths}) {
        ASSERT_EQ(static_cast<std::int64_t>(lengths.size()), examples.size());
        for (std::int64_t i = 0; i < examples.size(); ++i) {
            ASSERT_EQ(lengths[i], examples.length(i)) << "example " << i;
        }
    }
}

}  // namespace
}  // namespace oomlab::train
