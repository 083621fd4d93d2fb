// The advice after an out-of-memory: only fixes the estimator says fit, cheapest first, each
// a valid experiment.
#include <gtest/gtest.h>

#include <algorithm>

#include "engine_support.h"
#include "oomlab/advice/oom_fixes.h"
#include "oomlab/config/config_io.h"
#include "oomlab/estimator/estimator.h"

namespace oomlab {
namespace {

// Every example `length` tokens long.
DataProfile profile_of(int examples, int length, std::int64_t rows, int dim) {
    DataProfile profile;
    profile.train_examples = examples;
    profile.valid_examples = examples / 10;
    profile.num_classes = 4;
    profile.vocab_rows = rows;
    profile.embedding_dim = dim;
    profile.longest = length;
    profile.mean_length = length;
    profile.lengths.assign(examples, length);
    return profile;
}

ExperimentConfig transformer_b256() {
    return test::config_with({"model.kind=transformer", "train.batch_size=256", "train.max_len=64",
                              "train.padding=fixed", "train.optimizer=adam"});
}

std::int64_t peak_with(const ExperimentConfig& config, const Settings& set,
                       const DataProfile& profile) {
    ExperimentConfig next = config;
    apply_settings(next, set);
    validate_config(next);
    return estimate_memory(next, profile).peak_bytes;
}

TEST(OomFixes, EveryFixIsPredictedToFitAndCheapestComeFirst) {
    const ExperimentConfig config = transformer_b256();
    const DataProfile profile = profile_of(5000, 16, 8000, 50);
    const std::int64_t predicted = estimate_memory(config, profile).peak_bytes;
    const std::int64_t capacity = predicted / 3;
    const std::vector<OomFix> fixes = suggest_oom_fixes({config, profile, capacity, false});
    ASSERT_FALSE(fixes.empty());
    for (std::size_t i = 0; i < fixes.size(); ++i) {
        const OomFix& fix = fixes[i];
        EXPECT_LE(double(fix.predicted_peak_bytes), 0.95 * double(capacity)) << fix.reason;
        // The estimator predicted more than the capacity, so no scaling: the figure is its own.
        EXPECT_EQ(fix.predicted_peak_bytes, peak_with(config, fix.set, profile)) << fix.reason;
        EXPECT_FALSE(fix.reason.empty());
        if (i > 0) {
            EXPECT_LE(fixes[i - 1].cost, fix.cost);
        }
    }
    // Fixed padding costs nothing to drop, and the micro-batch split keeps the effective batch.
    EXPECT_EQ(fixes.front().set, (Settings{{"train.padding", "dynamic"}})) << fixes.front().reason;
    const auto split = std::find_if(fixes.begin(), fixes.end(), [](const OomFix& fix) {
        return fix.set.size() == 2 && fix.set[1].first == "train.accumulation";
    });
    ASSERT_NE(split, fixes.end());
    EXPECT_EQ(std::stoi(split->set[0].second) * std::stoi(split->set[1].second), 256);
    EXPECT_EQ(split->cost, FixCost::Slower);
}

TEST(OomFixes, AccumulationAloneIsNeverOfferedBecauseTheMicroBatchIsUnchanged) {
    const ExperimentConfig config = transformer_b256();
    const DataProfile profile = profile_of(5000, 16, 8000, 50);
    const std::int64_t capacity = estimate_memory(config, profile).peak_bytes / 2;
    for (const OomFix& fix : suggest_oom_fixes({config, profile, capacity, false})) {
        const bool only_accumulation =
            fix.set.size() == 1 && fix.set.front().first == "train.accumulation";
        EXPECT_FALSE(only_accumulation) << fix.reason;
    }
}

TEST(OomFixes, TheLeakIsTheFirstFix) {
    ExperimentConfig config =
        test::config_with({"debug.keep_loss_graph=true", "train.max_steps=200"});
    const DataProfile profile = profile_of(2000, 20, 4000, 50);
    const std::int64_t capacity = estimate_memory(config, profile).peak_bytes / 4;
    const std::vector<OomFix> fixes = suggest_oom_fixes({config, profile, capacity, false});
    ASSERT_FALSE(fixes.empty());
    EXPECT_EQ(fixes.front().set, (Settings{{"debug.keep_loss_graph", "false"}}));
    EXPECT_EQ(fixes.front().cost, FixCost::None);
}

TEST(OomFixes, AnUnderPredictionScalesEveryFixByWhatTheRunShowed) {
    const ExperimentConfig config = transformer_b256();
    const DataProfile profile = profile_of(5000, 16, 8000, 50);
    const std::int64_t predicted = estimate_memory(config, profile).peak_bytes;
    // The run failed under a capacity twice what the estimator predicted for it.
    const std::int64_t capacity = predicted * 2;
    const std::vector<OomFix> fixes = suggest_oom_fixes({config, profile, capacity, false});
    ASSERT_FALSE(fixes.empty());
    for (const OomFix& fix : fixes) {
        const std::int64_t raw = peak_with(config, fix.set, profile);
        EXPECT_NEAR(double(fix.predicted_peak_bytes), 2.0 * double(raw), 2.0) << fix.reason;
    }
}

TEST(OomFixes, ALargerCapIsTheLastResortAndOnlyForACap) {
    ExperimentConfig config = test::config_with({"memory.cap_mb=1"}, transformer_b256());
    const DataProfile profile = profile_of(5000, 64, 400000, 300);
    const std::vector<OomFix> fixes =
        suggest_oom_fixes({config, profile, config.memory.cap_bytes(), false});
    ASSERT_FALSE(fixes.empty());
    EXPECT_EQ(fixes.back().cost, FixCost::LargerDevice);
    EXPECT_EQ(fixes.back().set.front().first, "memory.cap_mb");
    config.memory.cap_mb = 0;  // a real device of 1 MiB: nothing to offer but what fits
    for (const OomFix& fix : suggest_oom_fixes({config, profile, 1 << 20, false})) {
        EXPECT_NE(fix.cost, FixCost::LargerDevice);
    }
}

bool offers(const std::vector<OomFix>& fixes, const Settings& set) {
    return std::any_of(fixes.begin(), fixes.end(),
                       [&](const OomFix& fix) { return fix.set == set; });
}

// Per process: the state of a large table under Adam is what sharding divides; sparse
// gradients, which several processes refuse, are offered to one process only.
TEST(OomFixes, SeveralProcessesAreOfferedShardingAndNotWhatTheyRefuse) {
    const ExperimentConfig config =
        test::config_with({"model.kind=bag", "train.batch_size=32", "train.optimizer=sgd"});
    const DataProfile profile = profile_of(5000, 16, 400000, 300);
    const std::int64_t per_rank = estimate_memory(config, profile, 2).peak_bytes;
    OomSituation situation{config, profile, per_rank * 9 / 10, false, 2};
    std::vector<OomFix> fixes = suggest_oom_fixes(situation);
    EXPECT_FALSE(offers(fixes, {{"embeddings.sparse_grad", "true"}}));
    situation.world_size = 1;
    EXPECT_TRUE(offers(suggest_oom_fixes(situation), {{"embeddings.sparse_grad", "true"}}));

    situation.config.train.optimizer = OptimizerKind::Adam;
    situation.world_size = 2;
    situation.capacity_bytes = estimate_memory(situation.config, profile, 2).peak_bytes * 9 / 10;
    fixes = suggest_oom_fixes(situation);
    ASSERT_TRUE(offers(fixes, {{"distributed.shard", "optimizer"}}));
    for (const OomFix& fix : fixes) {
        // Each prediction is one rank's, for the run's 2 processes.
        ExperimentConfig next = situation.config;
        apply_settings(next, fix.set);
        EXPECT_EQ(fix.predicted_peak_bytes, estimate_memory(next, profile, 2).peak_bytes)
            << fix.reason;
    }
    situation.world_size = 1;
    EXPECT_FALSE(offers(suggest_oom_fixes(situation), {{"distributed.shard", "optimizer"}}));
}

}  // namespace
}  // namespace oomlab
