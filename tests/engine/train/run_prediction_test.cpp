// The estimate of the run itself: a run too short to draw its data's worst batch is predicted
// for the batches it draws, with the worst case named beside it; evaluation for the
// validation batches it walks.
#include <gtest/gtest.h>

#include <cmath>

#include "engine_support.h"
#include "oomlab/estimator/estimator.h"
#include "oomlab/prepare/data_profile.h"
#include "oomlab/session/experiment.h"
#include "test_support.h"

namespace oomlab {
namespace {

double off(std::int64_t predicted, std::int64_t measured) {
    return std::abs(double(predicted - measured)) / double(measured);
}

// A BiLSTM trained for 12 steps with momentum on TREC and the real GloVe excerpt, its table
// trainable: the worst batch (padded to TREC's longest question) is not among the 12.
TEST(RunPrediction, AShortRunIsPredictedForTheBatchesItDraws) {
    OOMLAB_REQUIRE_SHARED_DATA("trec.train.txt");
    const std::string data = test::shared_data_dir();
    const ExperimentConfig config = test::config_with(
        {"device=cpu", "dataset.path=" + data + "/trec.train.txt", "embeddings.source=file",
         "embeddings.path=" + data + "/glove.6B.50d.head2446.txt", "embeddings.trainable=true",
         "model.kind=bilstm", "train.optimizer=momentum", "train.max_steps=12",
         "dataset.valid_ratio=0"});
    const DataProfile profile = profile_data(config);
    const MemoryEstimate run = estimate_memory(config, profile);
    const MemoryEstimate worst = estimate_memory(config, profile, 1, BatchesAssumed::EpochWorst);
    ASSERT_LT(run.worst_batch_length, worst.worst_batch_length);
    EXPECT_EQ(run.epoch_worst_length, worst.worst_batch_length);
    EXPECT_EQ(run.epoch_worst_peak_bytes, worst.peak_bytes);
    EXPECT_LT(run.peak_bytes, worst.peak_bytes);

    const std::unique_ptr<Experiment> experiment = Experiment::prepare(config);
    test::QuietObserver quiet;
    std::atomic<bool> cancel{false};
    const RunOutcome outcome = experiment->train(quiet, cancel);
    ASSERT_EQ(outcome.status, RunStatus::Completed) << outcome.error;
    EXPECT_LT(off(run.peak_bytes, outcome.peak_bytes), 0.05)
        << "predicted " << run.peak_bytes << ", measured " << outcome.peak_bytes;
    EXPECT_GT(off(worst.peak_bytes, outcome.peak_bytes), 0.10)
        << "the worst case is not this run's: predicted " << worst.peak_bytes << ", measured "
        << outcome.peak_bytes;
}

// Evaluation without no_grad keeps every validation batch's graph until it ends: in eval
// mode, where dropout keeps no masks (counted as in training, the estimate was 56% over).
TEST(RunPrediction, EvaluationKeepingItsGraphsIsPredictedInEvalMode) {
    const ExperimentConfig config = test::config_with(
        {"device=cpu", "model.kind=transformer", "train.optimizer=sgd", "train.max_steps=2",
         "dataset.valid_ratio=0.1", "eval.no_grad=false", "embeddings.source=synthetic"});
    const DataProfile profile = profile_data(config);
    ASSERT_EQ(std::int64_t(profile.valid_lengths.size()), profile.valid_examples);
    const MemoryEstimate estimate = estimate_memory(config, profile);

    const std::unique_ptr<Experiment> experiment = Experiment::prepare(config);
    test::QuietObserver quiet;
    std::atomic<bool> cancel{false};
    const RunOutcome outcome = experiment->train(quiet, cancel);
    ASSERT_EQ(outcome.status, RunStatus::Completed) << outcome.error;
    EXPECT_LT(off(estimate.peak_bytes, outcome.peak_bytes), 0.05)
        << "predicted " << estimate.peak_bytes << ", measured " << outcome.peak_bytes;
}

// With memory.alloc_conf the CPU run's tensors pass through the caching allocator's model;
// the estimate replays the predicted step's tensors through the same model. What it reserves
// at the peak agrees within 10% (docs/estimator.md names the configs where it does not).
TEST(RunPrediction, WhatTheAllocatorReservesAtThePeakIsPredicted) {
    const std::vector<std::vector<std::string>> runs = {
        {"model.kind=bag"},
        {"model.kind=bilstm"},
        {"model.kind=bilstm", "memory.precision=bf16", test::kBf16Batch},
        {"model.kind=transformer"},
        {"model.kind=transformer", "memory.precision=bf16", test::kBf16Batch},
        {"model.kind=transformer", "model.layers=4", "memory.checkpointing=layers",
         "train.batch_size=64"},
    };
    for (const std::vector<std::string>& settings : runs) {
        ExperimentConfig config =
            test::config_with({"device=cpu", "train.max_steps=4", "dataset.valid_ratio=0",
                               "embeddings.source=synthetic", "memory.alloc_conf=backend:native"});
        for (const std::string& setting : settings) {
            apply_config_override(config, setting);
        }
        const MemoryEstimate estimate = estimate_memory(config, profile_data(config));
        ASSERT_TRUE(estimate.caching_allocator);
        ASSERT_TRUE(estimate.reserved_bytes);

        const std::unique_ptr<Experiment> experiment = Experiment::prepare(config);
        test::QuietObserver quiet;
        std::atomic<bool> cancel{false};
        const RunOutcome outcome = experiment->train(quiet, cancel);
        ASSERT_EQ(outcome.status, RunStatus::Completed) << outcome.error;
        const std::int64_t reserved = outcome.peak_bytes + outcome.breakdown.allocator_cache;
        EXPECT_GT(outcome.breakdown.allocator_cache, 0) << settings.front();
        EXPECT_LT(off(*estimate.reserved_bytes, reserved), 0.10)
            << settings.back() << ": predicted " << *estimate.reserved_bytes << ", measured "
            << reserved;
    }
}

}  // namespace
}  // namespace oomlab
