// Out-of-memory under a cap: recorded, recovered from, and leaving nothing behind.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "engine_support.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/data/dataset.h"
#include "oomlab/estimator/estimator.h"
#include "oomlab/measure/tracking_allocator.h"
#include "oomlab/session/run_session.h"
#include "test_support.h"

namespace oomlab {
namespace {

ExperimentConfig small_transformer() {
    return test::config_with({"device=cpu", "embeddings.source=synthetic", "model.kind=transformer",
                              "train.optimizer=sgd", "train.padding=fixed",
                              "dataset.valid_ratio=0.05", "train.max_len=32"});
}

TEST(OutOfMemory, TwentyOomRunsLeaveMemoryAtItsBaselineAndAreAllRecorded) {
    test::TempDir dir;
    RunStore store = RunStore::open(dir.file("runs.sqlite"));
    ExperimentConfig config = small_transformer();
    // The leak grows every step until the cap stops it a few steps in.
    apply_config_override(config, "debug.keep_loss_graph=true");
    apply_config_override(config, "memory.cap_mb=60");
    apply_config_override(config, "train.max_steps=100");
    memory::install_tracking_allocator();
    const std::int64_t baseline = memory::cpu_tensor_stats().current_bytes;
    test::QuietListener quiet;
    std::atomic<bool> cancel{false};
    for (int run = 0; run < 20; ++run) {
        const RunResult result =
            run_and_record(config, "oom " + std::to_string(run), store, quiet, cancel);
        ASSERT_EQ(result.outcome.status, RunStatus::Oom) << result.outcome.error;
        EXPECT_GT(result.outcome.steps, 1);
        EXPECT_EQ(memory::cpu_tensor_stats().current_bytes, baseline) << "after run " << run;
    }
    const auto runs = store.list_runs();
    ASSERT_EQ(runs.size(), 20u);
    for (const auto& run : runs) {
        EXPECT_EQ(run.outcome.status, RunStatus::Oom);
        EXPECT_NE(run.outcome.error.find("out of memory at step"), std::string::npos);
        EXPECT_GE(store.metrics(run.id).size(), std::size_t(run.outcome.steps));
        EXPECT_EQ(store.events(run.id).back().kind, "oom");
    }
}

// About `examples` of the default dataset's texts, evenly spaced through its topics, as a
// JSONL file in `dir`: an epoch of it is a few optimizer steps, not a hundred.
std::string write_part_of_default_dataset(const test::TempDir& dir, std::size_t examples) {
    const std::vector<RawExample> all = read_default_examples();
    const std::size_t stride = std::max<std::size_t>(1, all.size() / examples);
    std::string lines;
    for (std::size_t i = 0; i < all.size(); i += stride) {
        lines += nlohmann::json{{"text", all[i].text}, {"label", all[i].label}}.dump() + "\n";
    }
    const std::string path = dir.file("part.jsonl");
    test::write_file(path, lines);
    return path;
}

TEST(OutOfMemory, AdaptCompletesWhatStopCannotWithTheSameEffectiveBatch) {
    test::TempDir dir;
    ExperimentConfig config = small_transformer();
    apply_config_override(config, "dataset.path=" + write_part_of_default_dataset(dir, 512));
    apply_config_override(config, "train.batch_size=64");
    apply_config_override(config, "train.epochs=1");
    // A cap between what a micro-batch of 32 (accumulating 2) and one of 64 need.
    ExperimentConfig half = config;
    apply_config_override(half, "train.batch_size=32");
    apply_config_override(half, "train.accumulation=2");
    const DataProfile profile = profile_data(config);
    const std::int64_t fits = estimate_memory(half, profile).peak_bytes;
    const std::int64_t too_big = estimate_memory(config, profile).peak_bytes;
    ASSERT_LT(fits * 1.2, too_big);
    apply_config_override(config,
                          "memory.cap_mb=" + std::to_string(std::int64_t(fits * 1.1) >> 20));

    RunStore store = RunStore::open(dir.file("runs.sqlite"));
    test::QuietListener quiet;
    std::atomic<bool> cancel{false};
    const RunResult stopped = run_and_record(config, "stop", store, quiet, cancel);
    EXPECT_EQ(stopped.outcome.status, RunStatus::Oom);

    apply_config_override(config, "memory.on_oom=adapt");
    const RunResult adapted = run_and_record(config, "adapt", store, quiet, cancel);
    ASSERT_EQ(adapted.outcome.status, RunStatus::Completed) << adapted.outcome.error;
    // Same effective batch: the epoch takes as many optimizer steps as planned for 64.
    EXPECT_EQ(adapted.outcome.steps, adapted.info.total_steps);
    bool adapted_event = false;
    for (const auto& event : store.events(adapted.run_id)) {
        if (event.kind == "adapt") {
            adapted_event = true;
            EXPECT_NE(event.message.find("micro-batch 64 -> 32, accumulation 1 -> 2"),
                      std::string::npos)
                << event.message;
        }
    }
    EXPECT_TRUE(adapted_event);

    apply_config_override(config, "memory.on_oom=halve");
    const RunResult halved = run_and_record(config, "halve", store, quiet, cancel);
    ASSERT_EQ(halved.outcome.status, RunStatus::Completed) << halved.outcome.error;
    EXPECT_GT(halved.outcome.steps, halved.info.total_steps);  // half the batch, more steps
}

}  // namespace
}  // namespace oomlab
