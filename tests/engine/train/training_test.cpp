// Small seeded runs on CPU through the public Experiment API.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <random>

#include "engine_support.h"
#include "oomlab/common/errors.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/session/experiment.h"
#include "test_support.h"

namespace oomlab {
namespace {

// Two classes told apart by their words, with shared filler: learnable in a few steps.
std::string write_toy_dataset(const test::TempDir& dir, int examples) {
    const std::vector<std::string> positive = {"good", "great", "fine", "lovely", "superb"};
    const std::vector<std::string> negative = {"bad", "awful", "poor", "dreadful", "grim"};
    const std::vector<std::string> filler = {"the", "a", "movie", "was", "plot", "and", "it"};
    std::mt19937 random(7);
    std::string content;
    for (int i = 0; i < examples; ++i) {
        const bool is_positive = i % 2 == 0;
        const auto& words = is_positive ? positive : negative;
        content += is_positive ? "pos\t" : "neg\t";
        const int length = 4 + static_cast<int>(random() % 12);
        for (int w = 0; w < length; ++w) {
            content +=
                (w % 3 == 0 ? words[random() % words.size()] : filler[random() % filler.size()]) +
                " ";
        }
        content += "\n";
    }
    const std::string path = dir.file("toy.tsv");
    test::write_file(path, content);
    return path;
}

class Recorder : public TrainObserver {
public:
    void on_metrics(const std::vector<MetricRow>& rows) override {
        for (const auto& row : rows) {
            if (row.phase == "step") {
                step_losses.push_back(*row.loss);
            }
            phases.insert(row.phase);
            all.push_back(row);
        }
    }
    void on_event(const EventRow& event) override { events.push_back(event); }
    std::vector<double> step_losses;
    std::set<std::string> phases;
    std::vector<MetricRow> all;
    std::vector<EventRow> events;
};

ExperimentConfig toy_config(const std::string& path) {
    return test::config_with({"dataset.path=" + path, "embeddings.source=synthetic",
                              "train.batch_size=16", "train.epochs=4", "train.lr=0.01",
                              "device=cpu", "model.hidden=32"});
}

double mean(const std::vector<double>& values, std::size_t from, std::size_t to) {
    double sum = 0;
    for (std::size_t i = from; i < to; ++i) {
        sum += values[i];
    }
    return sum / static_cast<double>(to - from);
}

// Preparation reads the data once: the profile it keeps for the run's prediction is the one
// the estimator reads on its own, also where the default source finds no GloVe file and
// falls back to synthetic vectors.
TEST(Training, PreparationKeepsTheDataProfileTheEstimatorReads) {
    test::TempDir nothing_installed;
    const auto set = [](const char* name, const char* value) {
        std::optional<std::string> old;
        if (const char* was = std::getenv(name)) {
            old = was;
        }
        value ? setenv(name, value, 1) : unsetenv(name);
        return old;
    };
    const std::string empty = nothing_installed.file("");
    const std::optional<std::string> glove_dir = set("OOMLAB_GLOVE_DIR", empty.c_str());
    const std::optional<std::string> data_home = set("XDG_DATA_HOME", empty.c_str());
    const ExperimentConfig config =
        test::config_with({"device=cpu", "embeddings.source=default", "embeddings.vocab=top:500",
                           "dataset.valid_ratio=0.2"});
    const DataProfile kept = Experiment::prepare(config)->info().profile;
    const DataProfile read = profile_data(config);
    set("OOMLAB_GLOVE_DIR", glove_dir ? glove_dir->c_str() : nullptr);
    set("XDG_DATA_HOME", data_home ? data_home->c_str() : nullptr);
    EXPECT_EQ(kept.train_examples, read.train_examples);
    EXPECT_EQ(kept.valid_examples, read.valid_examples);
    EXPECT_EQ(kept.num_classes, read.num_classes);
    EXPECT_EQ(kept.lengths, read.lengths);
    EXPECT_EQ(kept.longest, read.longest);
    EXPECT_EQ(kept.vocab_rows, read.vocab_rows);
    EXPECT_EQ(kept.embedding_dim, read.embedding_dim);
    EXPECT_EQ(kept.vector_rows, read.vector_rows);
    EXPECT_EQ(kept.dataset_words, read.dataset_words);
    EXPECT_EQ(kept.words_with_vector, read.words_with_vector);
    EXPECT_TRUE(read.synthetic_vectors);
    EXPECT_TRUE(kept.synthetic_vectors);
}

TEST(Training, EveryModelLearnsTheToyTask) {
    test::TempDir dir;
    const std::string path = write_toy_dataset(dir, 400);
    for (const char* kind : {"bag", "bilstm", "transformer"}) {
        ExperimentConfig config = toy_config(path);
        set_config_value(config, "model.kind", kind);
        set_config_value(config, "model.d_model", "32");
        set_config_value(config, "model.heads", "2");
        set_config_value(config, "model.ffn", "64");
        const std::unique_ptr<Experiment> experiment = Experiment::prepare(config);
        Recorder recorder;
        std::atomic<bool> cancel{false};
        const RunOutcome outcome = experiment->train(recorder, cancel);
        ASSERT_EQ(outcome.status, RunStatus::Completed) << kind << ": " << outcome.error;
        const auto& losses = recorder.step_losses;
        ASSERT_EQ(static_cast<std::int64_t>(losses.size()), experiment->info().total_steps) << kind;
        EXPECT_LT(mean(losses, losses.size() - 5, losses.size()), 0.5 * mean(losses, 0, 5)) << kind;
        ASSERT_TRUE(outcome.val_accuracy.has_value());
        EXPECT_GT(*outcome.val_accuracy, 0.9) << kind;
        EXPECT_GT(outcome.peak_bytes, outcome.breakdown.embedding_table) << kind;
    }
}

TEST(Training, SameSeedSameRunDifferentSeedDifferentRun) {
    test::TempDir dir;
    const std::string path = write_toy_dataset(dir, 200);
    auto losses_for = [&](const char* seed) {
        ExperimentConfig config = toy_config(path);
        set_config_value(config, "train.seed", seed);
        set_config_value(config, "train.padding", "bucket");
        const std::unique_ptr<Experiment> experiment = Experiment::prepare(config);
        Recorder recorder;
        std::atomic<bool> cancel{false};
        experiment->train(recorder, cancel);
        return recorder.step_losses;
    };
    const auto first = losses_for("3");
    EXPECT_EQ(first, losses_for("3"));
    EXPECT_NE(first, losses_for("4"));
}

TEST(Training, PhasesAreSampledAndAccumulationCountsOptimizerSteps) {
    test::TempDir dir;
    const std::string path = write_toy_dataset(dir, 128);
    ExperimentConfig config = toy_config(path);
    set_config_value(config, "dataset.valid_ratio", "0");
    set_config_value(config, "train.epochs", "1");
    set_config_value(config, "train.accumulation", "4");
    set_config_value(config, "train.batch_size", "8");
    const std::unique_ptr<Experiment> experiment = Experiment::prepare(config);
    EXPECT_EQ(experiment->info().total_steps, 4);  // 128 / 8 = 16 micro-batches, 4 per step
    Recorder recorder;
    std::atomic<bool> cancel{false};
    const RunOutcome outcome = experiment->train(recorder, cancel);
    EXPECT_EQ(outcome.steps, 4);
    EXPECT_EQ(recorder.phases,
              (std::set<std::string>{"batch", "forward", "backward", "optimizer", "step"}));
}

TEST(Training, CancelEndsTheRunAsCancelledWithItsMetrics) {
    test::TempDir dir;
    const std::string path = write_toy_dataset(dir, 400);
    const std::unique_ptr<Experiment> experiment = Experiment::prepare(toy_config(path));
    class CancelAfterFive : public Recorder {
    public:
        explicit CancelAfterFive(std::atomic<bool>& cancel) : m_cancel(cancel) {}
        void on_progress(const TrainProgress& progress) override {
            if (progress.step == 5) {
                m_cancel = true;
            }
        }
        std::atomic<bool>& m_cancel;
    };
    std::atomic<bool> cancel{false};
    CancelAfterFive recorder(cancel);
    const RunOutcome outcome = experiment->train(recorder, cancel);
    EXPECT_EQ(outcome.status, RunStatus::Cancelled);
    EXPECT_EQ(outcome.steps, 5);
    EXPECT_EQ(recorder.step_losses.size(), 5u);
}

TEST(Training, CapTurnsARunIntoAnOomWithTheMetricsBefore) {
    test::TempDir dir;
    const std::string path = write_toy_dataset(dir, 400);
    ExperimentConfig config = toy_config(path);
    set_config_value(config, "memory.cap_mb", "1");
    set_config_value(config, "model.kind", "transformer");
    set_config_value(config, "model.d_model", "64");
    set_config_value(config, "train.batch_size", "64");
    const std::unique_ptr<Experiment> experiment = Experiment::prepare(config);
    Recorder recorder;
    std::atomic<bool> cancel{false};
    const RunOutcome outcome = experiment->train(recorder, cancel);
    EXPECT_EQ(outcome.status, RunStatus::Oom);
    EXPECT_NE(outcome.error.find("out of memory at step 1"), std::string::npos) << outcome.error;
    ASSERT_FALSE(recorder.events.empty());
    EXPECT_EQ(recorder.events.back().kind, "oom");
}

TEST(Training, Fp16OnCpuIsRejectedBeforeTraining) {
    test::TempDir dir;
    ExperimentConfig config = toy_config(write_toy_dataset(dir, 50));
    set_config_value(config, "memory.precision", "fp16");
    try {
        (void)Experiment::prepare(config);
        FAIL() << "fp16 on the CPU was accepted";
    } catch (const BadInput& error) {
        EXPECT_NE(std::string(error.what()).find("memory.precision"), std::string::npos);
    }
}

}  // namespace
}  // namespace oomlab

namespace oomlab {
namespace {

// Phases are recorded for the first 20 steps and every 50th; the peak must still see the
// final evaluation, the biggest moment of a run that evaluates with autograd on.
TEST(Training, TheFinalEvaluationCountsInThePeakAfterPhaseSamplingThins) {
    const auto peak = [](int max_steps) {
        const ExperimentConfig config = test::config_with(
            {"device=cpu", "embeddings.source=synthetic", "model.kind=transformer",
             "train.optimizer=sgd", "train.max_len=32", "dataset.valid_ratio=0.05",
             "eval.no_grad=false", "train.max_steps=" + std::to_string(max_steps)});
        const std::unique_ptr<Experiment> experiment = Experiment::prepare(config);
        TrainObserver ignore;
        std::atomic<bool> cancel{false};
        const RunOutcome outcome = experiment->train(ignore, cancel);
        EXPECT_EQ(outcome.status, RunStatus::Completed) << outcome.error;
        return outcome.peak_bytes;
    };
    const std::int64_t sampled = peak(10);  // step 10: every phase recorded
    const std::int64_t thinned = peak(30);  // step 30: phases no longer recorded
    EXPECT_GT(thinned, sampled * 9 / 10) << "the evaluation's peak was missed";
}

}  // namespace
}  // namespace oomlab
