// A run against the prediction stored with it: the tolerance, which rows are shown, the
// step's temporaries under their own name, runs that cannot be held to a whole step, and the
// prediction kept in the store.
#include <gtest/gtest.h>

#include "oomlab/run/prediction_check.h"
#include "oomlab/store/run_store.h"
#include "test_support.h"

namespace oomlab {
namespace {

MemoryPrediction prediction() {
    MemoryPrediction p;
    p.peak_bytes = 10 << 20;
    p.breakdown.embedding_table = 4 << 20;
    p.breakdown.gradients = 4 << 20;
    p.breakdown.activations = 2 << 20;
    p.by_module = {{"embeddings", 4 << 20, 4 << 20, 0, 0}, {"optimizer", 0, 0, 0, 1 << 20}};
    p.worst_batch_length = 37;
    return p;
}

RunOutcome measured() {
    RunOutcome run;
    run.status = RunStatus::Completed;
    run.steps = 20;
    run.peak_bytes = 10 << 20;
    run.breakdown.embedding_table = 4 << 20;
    run.breakdown.gradients = 4 << 20;
    run.breakdown.activations = 2 << 20;
    run.by_module = {{"embeddings", 4 << 20, 4 << 20, 0, 0}, {"optimizer", 0, 0, 0, 1 << 20}};
    return run;
}

const PredictionRow* find(const std::vector<PredictionRow>& rows, const std::string& category,
                          const std::string& module = {}) {
    for (const PredictionRow& row : rows) {
        if (row.category == category && row.module == module) {
            return &row;
        }
    }
    return nullptr;
}

TEST(PredictionCheck, TenPercentOrSixtyFourKibibytesWhicheverIsLarger) {
    EXPECT_FALSE(prediction_disagrees(1000, 1000 + (64 << 10)));  // small: the slack
    EXPECT_TRUE(prediction_disagrees(1000, 1001 + (64 << 10)));
    EXPECT_FALSE(prediction_disagrees(10 << 20, (10 << 20) + (1 << 20)));  // exactly 10%
    EXPECT_TRUE(prediction_disagrees(10 << 20, (10 << 20) + (1 << 20) + 1));
    EXPECT_TRUE(prediction_disagrees(10 << 20, (9 << 20) - 1));  // under, too
}

TEST(PredictionCheck, AGradientCountedAsActivationsIsMarkedWhereverItIs) {
    RunOutcome run = measured();
    run.breakdown.gradients = 29 << 10;
    run.breakdown.activations += (4 << 20) - (29 << 10);  // the sums still hold
    run.by_module[0].gradients = 0;
    run.by_module[0].activations = 4 << 20;
    const PredictionCheck check = check_prediction(prediction(), run);
    EXPECT_TRUE(check.not_comparable.empty());
    EXPECT_FALSE(find(check.by_category, "peak")->disagrees);
    EXPECT_TRUE(find(check.by_category, "gradients")->disagrees);
    EXPECT_TRUE(find(check.by_category, "activations")->disagrees);
    EXPECT_TRUE(find(check.by_module, "gradients", "embeddings")->disagrees);
    EXPECT_TRUE(find(check.by_module, "activations", "embeddings")->disagrees);
    EXPECT_EQ(check.disagreements(), 4);
    // More than predicted: no known cause is offered.
    EXPECT_EQ(find(check.by_category, "activations")->why, "");
}

TEST(PredictionCheck, ShowsEachFigureOnceAndNamesTheUpdatesTemporaries) {
    const PredictionCheck check = check_prediction(prediction(), measured());
    EXPECT_EQ(check.disagreements(), 0);
    EXPECT_EQ(check.by_category.front().category, "peak");
    EXPECT_EQ(find(check.by_category, "data"), nullptr) << "0 in both: left out";
    EXPECT_EQ(find(check.by_category, "other"), nullptr) << "beside the peak, not predicted";
    const PredictionRow* update = find(check.by_module, "temporaries", "optimizer");
    ASSERT_NE(update, nullptr);
    EXPECT_EQ(update->measured, 1 << 20);
    EXPECT_EQ(find(check.by_module, "activations", "optimizer"), nullptr);
}

// Where a caching allocator was predicted (CUDA, or the model on the CPU), what it reserved at
// the peak is a row of its own: the tensors and the cache beside them.
TEST(PredictionCheck, WhatTheAllocatorReservedIsComparedWhereItWasPredicted) {
    MemoryPrediction p = prediction();
    p.breakdown.allocator_cache = 2 << 20;
    RunOutcome run = measured();
    run.breakdown.allocator_cache = 3 << 20;
    const PredictionCheck check = check_prediction(p, run);
    const PredictionRow* reserved = find(check.by_category, "reserved");
    ASSERT_NE(reserved, nullptr);
    EXPECT_EQ(reserved->predicted, p.peak_bytes + (2 << 20));
    EXPECT_EQ(reserved->measured, run.breakdown.tensors() + (3 << 20));
    const PredictionRow* cache = find(check.by_category, "allocator_cache");
    ASSERT_NE(cache, nullptr);
    EXPECT_TRUE(cache->disagrees);
    EXPECT_NE(cache->why.find("allocator's model"), std::string::npos) << cache->why;
    EXPECT_EQ(find(check_prediction(prediction(), run).by_category, "reserved"), nullptr)
        << "no cache predicted (the CPU without memory.alloc_conf): no row";
}

// Batches of different lengths: the run peaked at its longest where no gradient was alive.
// Where every batch is the longest (fixed padding) that is no cause.
TEST(PredictionCheck, NoGradientAtThePeakSaysWhyWhenBatchesDiffer) {
    RunOutcome run = measured();
    run.breakdown.gradients = 0;
    run.by_module[0].gradients = 0;
    const PredictionCheck check = check_prediction(prediction(), run);
    const PredictionRow* gradients = find(check.by_category, "gradients");
    ASSERT_NE(gradients, nullptr);
    EXPECT_TRUE(gradients->disagrees);
    EXPECT_NE(gradients->why.find("where no gradient was alive"), std::string::npos)
        << gradients->why;
    MemoryPrediction fixed = prediction();
    fixed.every_batch_worst = true;
    const PredictionCheck fixed_check = check_prediction(fixed, run);
    EXPECT_EQ(find(fixed_check.by_category, "gradients")->why, "");
}

TEST(PredictionCheck, LessDataThanPredictedSaysWhy) {
    MemoryPrediction p = prediction();
    p.breakdown.data = 1 << 20;
    const PredictionCheck check = check_prediction(p, measured());
    const PredictionRow* data = find(check.by_category, "data");
    ASSERT_NE(data, nullptr);
    EXPECT_TRUE(data->disagrees);
    EXPECT_NE(data->why.find("37 tokens"), std::string::npos) << data->why;
}

TEST(PredictionCheck, ARunThatRanOutOfMemoryIsNotHeldToAWholeStep) {
    RunOutcome run = measured();
    run.status = RunStatus::Oom;
    run.breakdown.activations = 0;
    const PredictionCheck check = check_prediction(prediction(), run);
    EXPECT_NE(check.not_comparable.find("out of memory"), std::string::npos);
    EXPECT_EQ(check.disagreements(), 0);
    EXPECT_EQ(find(check.by_category, "activations")->measured, 0) << "still shown";
}

TEST(PredictionCheck, ModulesAreLeftOutWhereTheDeviceDoesNotMeasureThem) {
    RunOutcome run = measured();
    run.by_module[1].activations.reset();  // the CUDA allocator does not tell modules apart
    EXPECT_TRUE(check_prediction(prediction(), run).by_module.empty());
}

TEST(PredictionCheck, IsStoredWithTheRunAndReadBack) {
    test::TempDir dir;
    RunStore store = RunStore::open(dir.file("runs.sqlite"));
    NewRun run{"predicted", "{}", "cpu", "", "", 1};
    run.prediction_json = prediction_json(prediction());
    const std::int64_t id = store.create_run(run);
    const std::int64_t without = store.create_run({"older", "{}", "cpu", "", "", 1});
    const std::optional<RunRecord> stored = store.find_run(id);
    ASSERT_TRUE(stored && stored->prediction);
    EXPECT_EQ(stored->prediction->peak_bytes, 10 << 20);
    EXPECT_EQ(stored->prediction->breakdown.gradients, 4 << 20);
    EXPECT_EQ(stored->prediction->worst_batch_length, 37);
    ASSERT_EQ(stored->prediction->by_module.size(), 2u);
    EXPECT_EQ(stored->prediction->by_module[1].activations, 1 << 20);
    EXPECT_FALSE(store.find_run(without)->prediction);
    EXPECT_FALSE(parse_prediction_json("{\"peak_bytes\": \"x\"}"));
    EXPECT_FALSE(parse_prediction_json("not json"));
}

}  // namespace
}  // namespace oomlab
