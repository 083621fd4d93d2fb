// Memory by module: every byte at the peak attributed to the part of the model that holds it,
// consistent with the breakdown by category, and the staircase of a run's stages.
#include <gtest/gtest.h>

#include <numeric>

#include "engine_support.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/run/memory_diff.h"
#include "oomlab/session/experiment.h"
#include "test_support.h"

namespace oomlab {
namespace {

RunOutcome train(const std::vector<std::string>& settings) {
    ExperimentConfig config =
        test::config_with({"device=cpu", "embeddings.source=synthetic", "dataset.valid_ratio=0",
                           "train.max_steps=3", "train.optimizer=adam"});
    for (const auto& assignment : settings) {
        apply_config_override(config, assignment);
    }
    const std::unique_ptr<Experiment> experiment = Experiment::prepare(config);
    test::QuietObserver quiet;
    std::atomic<bool> cancel{false};
    RunOutcome outcome = experiment->train(quiet, cancel);
    EXPECT_EQ(outcome.status, RunStatus::Completed) << outcome.error;
    return outcome;
}

std::int64_t sum(const std::vector<ModuleMemory>& modules,
                 std::int64_t (*field)(const ModuleMemory&)) {
    return std::accumulate(
        modules.begin(), modules.end(), std::int64_t(0),
        [&](std::int64_t total, const ModuleMemory& m) { return total + field(m); });
}

struct Case {
    std::string model;
    std::string precision;
    std::string checkpointing;
};

void PrintTo(const Case& c, std::ostream* out) {
    *out << c.model << " " << c.precision << " checkpointing=" << c.checkpointing;
}

std::string case_name(const testing::TestParamInfo<Case>& info) {
    return info.param.model + "_" + info.param.precision + "_" + info.param.checkpointing;
}

class ModulesAddUp : public testing::TestWithParam<Case> {};

TEST_P(ModulesAddUp, ToTheBreakdownByCategory) {
    const Case& c = GetParam();
    std::vector<std::string> settings{"model.kind=" + c.model, "memory.precision=" + c.precision,
                                      "memory.checkpointing=" + c.checkpointing};
    if (c.precision == "bf16") {
        settings.push_back(test::kBf16Batch);
    }
    const RunOutcome outcome = train(settings);
    ASSERT_FALSE(outcome.by_module.empty());
    const MemoryBreakdown& b = outcome.breakdown;
    for (const ModuleMemory& module : outcome.by_module) {
        ASSERT_TRUE(module.activations.has_value()) << module.module << " not measured on the CPU";
    }
    const double activations =
        double(sum(outcome.by_module, [](const ModuleMemory& m) { return *m.activations; }));
    EXPECT_NEAR(activations, double(b.activations), 0.05 * double(b.activations));
    const double parameters =
        double(sum(outcome.by_module, [](const ModuleMemory& m) { return m.parameters; }));
    EXPECT_NEAR(parameters, double(b.embedding_table + b.parameters),
                0.01 * double(b.embedding_table + b.parameters));
    EXPECT_EQ(sum(outcome.by_module, [](const ModuleMemory& m) { return m.gradients; }),
              b.gradients);
    EXPECT_EQ(sum(outcome.by_module, [](const ModuleMemory& m) { return m.optimizer_state; }),
              b.optimizer_state);
    // The table is the embeddings module's alone.
    EXPECT_EQ(outcome.by_module.front().module, "embeddings");
    EXPECT_EQ(outcome.by_module.front().parameters, b.embedding_table);
}

INSTANTIATE_TEST_SUITE_P(
    Grid, ModulesAddUp,
    testing::Values(Case{"bag", "fp32", "none"}, Case{"bag", "bf16", "none"},
                    Case{"bag", "fp32", "layers"}, Case{"bag", "bf16", "layers"},
                    Case{"bilstm", "fp32", "none"}, Case{"bilstm", "bf16", "none"},
                    Case{"bilstm", "fp32", "layers"}, Case{"bilstm", "bf16", "layers"},
                    Case{"transformer", "fp32", "none"}, Case{"transformer", "bf16", "none"},
                    Case{"transformer", "fp32", "layers"}, Case{"transformer", "bf16", "layers"}),
    case_name);

// A gradient is a gradient at the peak whichever moment the peak falls at. With SGD the
// peak of a run falls in backward, inside the op that computes the embedding table's gradient
// and before the hook that names it ran; it was then counted as activations (1.6 MB of
// "activations" in the embeddings module, gradients 29 KiB, on TREC with the GloVe excerpt).
class GradientsAtThePeak : public testing::TestWithParam<std::vector<std::string>> {};

TEST_P(GradientsAtThePeak, AreTheTablesGradientForEveryOptimizer) {
    std::vector<std::string> settings = GetParam();
    if (settings.front() == "trec") {
        OOMLAB_REQUIRE_SHARED_DATA("trec.train.txt");
        const std::string data = test::shared_data_dir();
        settings.front() = "dataset.path=" + data + "/trec.train.txt";
        settings.push_back("embeddings.source=file");
        settings.push_back("embeddings.path=" + data + "/glove.6B.50d.head2446.txt");
    }
    settings.push_back("train.max_steps=20");
    settings.push_back("embeddings.trainable=true");
    for (const char* optimizer : {"sgd", "momentum", "adam", "adamw"}) {
        std::vector<std::string> run = settings;
        run.push_back(std::string("train.optimizer=") + optimizer);
        const RunOutcome outcome = train(run);
        ASSERT_FALSE(outcome.by_module.empty());
        const ModuleMemory& embeddings = outcome.by_module.front();
        ASSERT_EQ(embeddings.module, "embeddings");
        EXPECT_EQ(embeddings.gradients, embeddings.parameters) << optimizer;
        // Looking up rows saves indices, not the table: its activations are small.
        EXPECT_LT(*embeddings.activations, embeddings.parameters / 10) << optimizer;
        EXPECT_GE(outcome.breakdown.gradients, outcome.breakdown.embedding_table) << optimizer;
    }
}

INSTANTIATE_TEST_SUITE_P(Data, GradientsAtThePeak,
                         testing::Values(std::vector<std::string>{"model.kind=bag"},
                                         std::vector<std::string>{"trec", "model.kind=bag"}));

TEST(ModuleMemory, EachModelNamesItsParts) {
    const auto names = [](const RunOutcome& outcome) {
        std::vector<std::string> result;
        for (const ModuleMemory& module : outcome.by_module) {
            result.push_back(module.module);
        }
        return result;
    };
    EXPECT_EQ(names(train({"model.kind=bag"})),
              (std::vector<std::string>{"embeddings", "pooling", "hidden", "output", "loss",
                                        "optimizer", "other"}));
    EXPECT_EQ(names(train({"model.kind=bilstm", "model.layers=2"})),
              (std::vector<std::string>{"embeddings", "lstm layer 1", "lstm layer 2", "head",
                                        "loss", "optimizer", "other"}));
    EXPECT_EQ(names(train({"model.kind=transformer", "model.layers=2"})),
              (std::vector<std::string>{"embeddings", "projection", "block 1", "block 2", "head",
                                        "loss", "optimizer", "other"}));
}

TEST(ModuleMemory, CheckpointingShowsAsTheBlocksActivationsInADiff) {
    const std::vector<std::string> base = {"model.kind=transformer", "model.layers=4",
                                           "model.dropout=0"};
    auto checkpointed = base;
    checkpointed.push_back("memory.checkpointing=layers");
    const MemoryDiff diff = diff_memory(train(base), train(checkpointed));
    ASSERT_GE(diff.by_module.size(), 3u);
    // The three blocks whose activations checkpointing dropped come first; the last block is
    // recomputed in backward, so it holds its activations at the peak either way.
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(diff.by_module[i].category, "activations");
        EXPECT_EQ(diff.by_module[i].module.rfind("block ", 0), 0u) << diff.by_module[i].module;
        EXPECT_LT(diff.by_module[i].difference(), 0);
    }
    EXPECT_EQ(diff.by_category.front().category, "activations");
    EXPECT_LT(diff.b_peak, diff.a_peak);
}

TEST(Staircase, RisesThroughTheStagesOfARun) {
    const RunOutcome outcome = train({"model.kind=bag", "train.max_steps=4"});
    std::vector<std::string> stages;
    for (const MemoryStage& stage : outcome.staircase) {
        stages.push_back(stage.stage);
    }
    EXPECT_EQ(stages, (std::vector<std::string>{"empty", "weights", "optimizer state",
                                                "first step peak", "steady state"}));
    ASSERT_EQ(outcome.staircase.size(), 5u);
    const MemoryBreakdown& b = outcome.breakdown;
    EXPECT_EQ(outcome.staircase[0].allocated_bytes, 0);
    EXPECT_EQ(outcome.staircase[1].allocated_bytes, b.embedding_table + b.parameters);
    // After the first update: the weights, Adam's two moments of every trainable value, and
    // the batches the loader has ready (the current one, two queued, one being built; b.data
    // is the largest one).
    const std::int64_t added =
        outcome.staircase[2].allocated_bytes - outcome.staircase[1].allocated_bytes;
    EXPECT_GE(added, 2 * (b.embedding_table + b.parameters));
    EXPECT_LE(added, 2 * (b.embedding_table + b.parameters) + 4 * b.data);
    EXPECT_GT(outcome.staircase[3].allocated_bytes, outcome.staircase[2].allocated_bytes);
    EXPECT_LE(outcome.staircase[4].allocated_bytes, outcome.peak_bytes);
}

TEST(Fragmentation, TheCpuAllocatorHasNoBlocksToReport) {
    ExperimentConfig config =
        test::config_with({"device=cpu", "embeddings.source=synthetic", "train.max_steps=3",
                           "model.kind=transformer", "train.batch_size=256", "memory.cap_mb=8"});
    const std::unique_ptr<Experiment> experiment = Experiment::prepare(config);
    test::QuietObserver quiet;
    std::atomic<bool> cancel{false};
    const RunOutcome outcome = experiment->train(quiet, cancel);
    ASSERT_EQ(outcome.status, RunStatus::Oom) << outcome.error;
    EXPECT_FALSE(outcome.fragmentation.has_value());
    // What it asked for is in the message, for the allocators that can say more.
    EXPECT_TRUE(requested_bytes_in(outcome.error).has_value()) << outcome.error;
}

}  // namespace
}  // namespace oomlab
