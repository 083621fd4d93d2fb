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

class Quiet : public TrainObserver {};

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
    Quiet quiet;
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
    Quiet quiet;
    std::atomic<bool> cancel{false};
    const RunOutcome outcome = experiment->train(quiet, cancel);
    ASSERT_EQ(outcome.status, RunStatus::Completed) << outcome.error;
    EXPECT_LT(off(estimate.peak_bytes, outcome.peak_bytes), 0.05)
        << "predicted " << estimate.peak_bytes << ", measured " << outcome.peak_bytes;
}

}  // namespace
}  // namespace oomlab
