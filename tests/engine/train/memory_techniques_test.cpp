// Each memory technique, measured with the tracking allocator: direction and size.
#include <gtest/gtest.h>

#include <map>
#include <numeric>

#include "engine_support.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/session/experiment.h"
#include "test_support.h"

namespace oomlab {
namespace {

constexpr double kMiB = 1 << 20;

struct Measured {
    RunOutcome outcome;
    ExperimentInfo info;
    std::map<std::string, std::vector<MetricRow>> by_phase;

    // Step peak minus what was allocated when the step's first batch was ready: the bytes
    // the step itself added (activations, gradients, temporaries).
    double activation_peak() const {
        double worst = 0;
        const auto& ready = by_phase.at("batch");
        for (const auto& step : by_phase.at("step")) {
            for (const auto& row : ready) {
                if (row.step == step.step) {
                    worst = std::max(worst, double(*step.peak_bytes - *row.allocated_bytes));
                }
            }
        }
        return worst;
    }
    double allocated_after(const std::string& phase, std::int64_t step) const {
        for (const auto& row : by_phase.at(phase)) {
            if (row.step == step) {
                return double(*row.allocated_bytes);
            }
        }
        ADD_FAILURE() << "no " << phase << " sample at step " << step;
        return 0;
    }
};

class Collector : public TrainObserver {
public:
    void on_metrics(const std::vector<MetricRow>& rows) override {
        for (const auto& row : rows) {
            measured.by_phase[row.phase].push_back(row);
        }
    }
    Measured measured;
};

Measured measure(std::vector<std::string> settings) {
    ExperimentConfig config =
        test::config_with({"device=cpu", "embeddings.source=synthetic", "dataset.valid_ratio=0",
                           "train.max_steps=6", "model.dropout=0"});
    for (const auto& assignment : settings) {
        apply_config_override(config, assignment);
    }
    const std::unique_ptr<Experiment> experiment = Experiment::prepare(config);
    Collector collector;
    std::atomic<bool> cancel{false};
    collector.measured.outcome = experiment->train(collector, cancel);
    collector.measured.info = experiment->info();
    EXPECT_EQ(collector.measured.outcome.status, RunStatus::Completed)
        << collector.measured.outcome.error;
    return collector.measured;
}

TEST(MemoryTechniques, FrozenTableWithAdamSavesThreeTimesTheTable) {
    const std::vector<std::string> base = {"model.kind=bag", "embeddings.vocab=top:40000",
                                           "train.optimizer=adam"};
    auto frozen_settings = base;
    frozen_settings.push_back("embeddings.trainable=false");
    const Measured trainable = measure(base);
    const Measured frozen = measure(frozen_settings);
    // After backward: parameters, gradients and Adam's two moments are resident.
    const double saved =
        trainable.allocated_after("backward", 3) - frozen.allocated_after("backward", 3);
    const double table = double(trainable.outcome.breakdown.embedding_table);
    EXPECT_NEAR(saved / table, 3.0, 0.3)
        << "saved " << saved / kMiB << " MiB, table " << table / kMiB << " MiB";
}

TEST(MemoryTechniques, DatasetVocabularyShrinksTheTableToTheDatasetWords) {
    const Measured full = measure({"model.kind=bag", "embeddings.vocab=full"});
    const Measured dataset = measure({"model.kind=bag", "embeddings.vocab=dataset"});
    EXPECT_EQ(full.info.vocab_size, 400000 + 2);  // 6B.50d has 400,000 words
    EXPECT_EQ(dataset.info.vocab_size, dataset.info.dataset_words + 2);
    EXPECT_EQ(dataset.outcome.breakdown.embedding_table, dataset.info.vocab_size * 50 * 4);
    EXPECT_LT(dataset.outcome.peak_bytes * 10, full.outcome.peak_bytes);
}

TEST(MemoryTechniques, CheckpointingCutsTheActivationPeakOfFourLayers) {
    const std::vector<std::string> base = {"model.kind=transformer", "model.layers=4",
                                           "train.padding=fixed", "train.optimizer=sgd"};
    auto checkpointed_settings = base;
    checkpointed_settings.push_back("memory.checkpointing=layers");
    const double plain = measure(base).activation_peak();
    const double checkpointed = measure(checkpointed_settings).activation_peak();
    EXPECT_LT(checkpointed, 0.6 * plain)
        << plain / kMiB << " MiB -> " << checkpointed / kMiB << " MiB";
}

TEST(MemoryTechniques, AccumulationDividesTheActivationPeakByItsFactor) {
    const double whole = measure({"model.kind=transformer", "train.padding=fixed",
                                  "train.optimizer=sgd", "train.batch_size=64"})
                             .activation_peak();
    const double quarter =
        measure({"model.kind=transformer", "train.padding=fixed", "train.optimizer=sgd",
                 "train.batch_size=16", "train.accumulation=4"})
            .activation_peak();
    const double ratio = whole / quarter;
    EXPECT_GT(ratio, 3.0) << ratio;
    EXPECT_LT(ratio, 4.5) << ratio;
}

TEST(MemoryTechniques, Bf16CutsActivations) {
    const double fp32 = measure({"model.kind=transformer", "train.padding=fixed",
                                 "train.optimizer=sgd", test::kBf16Batch})
                            .activation_peak();
    const double bf16 = measure({"model.kind=transformer", "train.padding=fixed",
                                 "train.optimizer=sgd", "memory.precision=bf16", test::kBf16Batch})
                            .activation_peak();
    EXPECT_LT(bf16, 0.75 * fp32) << fp32 / kMiB << " MiB -> " << bf16 / kMiB << " MiB";
}

TEST(MemoryTechniques, BucketPaddingBeatsFixedPadding) {
    const auto mean_step_peak = [](const Measured& run) {
        double sum = 0;
        for (const auto& row : run.by_phase.at("step")) {
            sum += double(*row.peak_bytes);
        }
        return sum / double(run.by_phase.at("step").size());
    };
    const std::vector<std::string> base = {"model.kind=transformer", "train.optimizer=sgd",
                                           "train.max_steps=15"};
    auto fixed = base;
    fixed.push_back("train.padding=fixed");
    auto bucket = base;
    bucket.push_back("train.padding=bucket");
    const double fixed_peak = mean_step_peak(measure(fixed));
    const double bucket_peak = mean_step_peak(measure(bucket));
    EXPECT_LT(bucket_peak, 0.75 * fixed_peak)
        << fixed_peak / kMiB << " MiB -> " << bucket_peak / kMiB << " MiB";
}

TEST(MemoryTechniques, LossGraphLeakGrowsWhileTheCorrectLoopStaysFlat) {
    const std::vector<std::string> base = {"model.kind=transformer", "train.padding=fixed",
                                           "train.optimizer=sgd", "train.max_steps=12"};
    auto leaky_settings = base;
    leaky_settings.push_back("debug.keep_loss_graph=true");
    const Measured correct = measure(base);
    const Measured leaky = measure(leaky_settings);
    const auto growth = [](const Measured& run) {
        return run.allocated_after("optimizer", 12) - run.allocated_after("optimizer", 2);
    };
    EXPECT_NEAR(growth(correct), 0.0, 0.05 * kMiB);
    // Ten more steps of kept graphs: about ten steps of activations.
    EXPECT_GT(growth(leaky), 5 * correct.activation_peak())
        << growth(leaky) / kMiB << " MiB over 10 steps";
}

}  // namespace
}  // namespace oomlab
