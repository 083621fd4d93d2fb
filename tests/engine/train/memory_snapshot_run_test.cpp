// debug.memory_snapshot on the CPU: a run writes a snapshot Python loads, whose trace replays
// to the run's measured peak, with allocations tagged by phase.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <set>

#include "engine_support.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/session/run_session.h"
#include "snapshot_replay.h"
#include "test_support.h"

namespace oomlab {
namespace {

TEST(MemorySnapshotRun, TraceReplaysToThePeakAndIsTaggedByPhase) {
    test::TempDir dir;
    const std::string path = dir.file("snapshot.pickle");
    const ExperimentConfig config =
        test::config_with({"device=cpu", "embeddings.source=synthetic", "model.kind=transformer",
                           "train.optimizer=adam", "train.max_steps=3", "dataset.valid_ratio=0.05",
                           "train.max_len=32", "debug.memory_snapshot=" + path});
    RunStore store = RunStore::open(dir.file("runs.sqlite"));
    test::QuietListener quiet;
    std::atomic<bool> cancel{false};
    const RunResult result = run_and_record(config, "snapshot", store, quiet, cancel);
    ASSERT_EQ(result.outcome.status, RunStatus::Completed) << result.outcome.error;
    const auto events = store.events(result.run_id);
    EXPECT_TRUE(std::any_of(events.begin(), events.end(), [&](const EventRow& event) {
        return event.message.find("memory snapshot written to " + path) != std::string::npos;
    }));

    const auto loaded = test::pickle_as_json(path);
    if (!loaded) {
        GTEST_SKIP() << "no python3 to read the pickle with";
    }
    const auto snapshot = nlohmann::json::parse(*loaded);
    ASSERT_EQ(snapshot["device_traces"].size(), 1u);
    std::map<std::int64_t, std::int64_t> live;
    std::int64_t bytes = 0;
    std::int64_t peak = 0;
    std::set<std::string> tags;
    for (const auto& event : snapshot["device_traces"][0]) {
        const std::string action = event["action"];
        if (action == "alloc") {
            live[event["addr"]] = event["size"];
            bytes += event["size"].get<std::int64_t>();
            peak = std::max(peak, bytes);
            tags.insert(event["frames"][0]["name"].get<std::string>());
        } else if (action == "free_completed") {
            bytes -= live.at(event["addr"]);
            live.erase(event["addr"].get<std::int64_t>());
        }
    }
    EXPECT_EQ(peak, result.outcome.peak_bytes);
    for (const char* tag : {"setup: parameters", "data: batches", "forward: activations",
                            "backward: gradients", "optimizer: state and update", "evaluation"}) {
        EXPECT_TRUE(tags.count(tag)) << "no allocation tagged " << tag;
    }
    // What is still alive at the end (the model, the optimizer state) is in the segments.
    std::int64_t alive = 0;
    for (const auto& segment : snapshot["segments"]) {
        alive += segment["allocated_size"].get<std::int64_t>();
    }
    EXPECT_EQ(alive, bytes);
    EXPECT_GT(alive, 0);
}

// memory_viz's "Allocator State History" undoes the trace from the final state: for each
// model, and for a run that ends out of memory, every step of that must find its segment.
TEST(MemorySnapshotRun, TheViewerCanWalkTheWholeHistoryOfEveryModel) {
    for (const std::string setting :
         {"model.kind=bag", "model.kind=bilstm", "model.kind=transformer", "memory.cap_mb=6"}) {
        test::TempDir dir;
        const std::string path = dir.file("snapshot.pickle");
        const ExperimentConfig config = test::config_with(
            {"device=cpu", "embeddings.source=synthetic", "model.kind=transformer",
             "train.max_steps=3", "dataset.valid_ratio=0.05", "train.max_len=32",
             "debug.memory_snapshot=" + path, setting});
        RunStore store = RunStore::open(dir.file("runs.sqlite"));
        test::QuietListener quiet;
        std::atomic<bool> cancel{false};
        const RunResult result = run_and_record(config, setting, store, quiet, cancel);
        const bool capped = setting.rfind("memory.cap_mb", 0) == 0;
        ASSERT_EQ(result.outcome.status, capped ? RunStatus::Oom : RunStatus::Completed)
            << setting << ": " << result.outcome.error;
        const auto loaded = test::pickle_as_json(path);
        if (!loaded) {
            GTEST_SKIP() << "no python3 to read the pickle with";
        }
        const auto snapshot = nlohmann::json::parse(*loaded);
        EXPECT_EQ(test::snapshot_replay_problems(snapshot), std::vector<std::string>{}) << setting;
        bool oom = false;
        for (const auto& event : snapshot["device_traces"][0]) {
            oom = oom || event["action"] == "oom";
        }
        EXPECT_EQ(oom, capped) << setting;
    }
}

}  // namespace
}  // namespace oomlab
