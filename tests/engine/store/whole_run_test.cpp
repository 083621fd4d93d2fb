// A run made elsewhere, added whole: the same run when read back, kept once by its uid, and
// nothing of it written when any part fails.
#include <gtest/gtest.h>

#include "bad_input.h"
#include "oomlab/common/errors.h"
#include "oomlab/store/run_store.h"
#include "raw_sqlite.h"
#include "test_support.h"

namespace oomlab {
namespace {

WholeRun student_run() {
    WholeRun whole;
    whole.uid = std::string(32, 'a');
    RunRecord& run = whole.run;
    run.name = "alice: batch 64";
    run.config_json = R"({"train":{"batch_size":64}})";
    run.created_at = "2026-11-29T10:00:00.000Z";
    run.finished_at = "2026-11-29T10:00:05.250Z";
    run.device = "cuda:0 (NVIDIA H200)";
    run.engine_version = "0.9";
    run.torch_version = "2.11.0";
    run.tags = "lab 3";
    run.notes = "tried a bigger batch";
    run.tracker_tags = {{"oomlab.lesson", "batch-size"}, {"oomlab.lesson_run", "1"}};
    run.prediction = MemoryPrediction{9000, {}, {{"embeddings", 100, 0, 0, 0}}, 64, false};
    run.outcome.status = RunStatus::Oom;
    run.outcome.steps = 3;
    run.outcome.peak_bytes = 8000;
    run.outcome.val_accuracy = 0.5;
    run.outcome.error = "out of memory";
    run.outcome.by_module = {{"embeddings", 100, 0, 0, 40}};
    run.outcome.staircase = {{"weights", 100, std::nullopt}};
    run.outcome.fragmentation = Fragmentation{4096, 6000, 2048, 5, 0};
    MetricRow row;
    row.step = 1;
    row.phase = "step";
    row.wall_ms = 12;
    row.loss = 1.25;
    row.peak_bytes = 8000;
    whole.metrics = {row};
    whole.events = {{3, "oom", "out of memory at step 3"}};
    return whole;
}

TEST(WholeRun, ReadsBackAsItWasMadeAndIsKeptOnceByItsUid) {
    test::TempDir dir;
    RunStore store = RunStore::open(dir.file("class.sqlite"));
    const WholeRun whole = student_run();
    const std::int64_t id = store.add_whole_run(whole);
    EXPECT_EQ(store.run_uid(id), whole.uid);
    EXPECT_EQ(store.run_with_uid(whole.uid), id);

    const RunRecord run = *store.find_run(id);
    EXPECT_EQ(run.name, "alice: batch 64");
    EXPECT_EQ(run.created_at, whole.run.created_at);
    EXPECT_EQ(run.finished_at, whole.run.finished_at);
    EXPECT_EQ(run.device, whole.run.device);
    EXPECT_EQ(run.tags, "lab 3");
    EXPECT_EQ(run.notes, "tried a bigger batch");
    EXPECT_EQ(run.tracker_tags, whole.run.tracker_tags);
    EXPECT_EQ(run.config_json, whole.run.config_json);
    EXPECT_EQ(run.outcome.status, RunStatus::Oom);
    EXPECT_EQ(run.outcome.steps, 3);
    EXPECT_EQ(run.outcome.peak_bytes, 8000);
    EXPECT_EQ(run.outcome.error, "out of memory");
    ASSERT_EQ(run.outcome.by_module.size(), 1u);
    EXPECT_EQ(run.outcome.by_module[0].activations, 40);
    ASSERT_TRUE(run.outcome.fragmentation);
    EXPECT_EQ(run.outcome.fragmentation->free_blocks, 5);
    ASSERT_TRUE(run.prediction);
    EXPECT_EQ(run.prediction->peak_bytes, 9000);
    ASSERT_EQ(store.metrics(id).size(), 1u);
    EXPECT_EQ(store.metrics(id)[0].loss, 1.25);
    ASSERT_EQ(store.events(id).size(), 1u);
    EXPECT_EQ(store.events(id)[0].kind, "oom");

    EXPECT_NE(test::bad_input_message([&] { store.add_whole_run(whole); }).find("already"),
              std::string::npos);
    EXPECT_EQ(store.list_runs().size(), 1u);
}

TEST(WholeRun, ARunThatCannotBeWrittenWholeLeavesNothing) {
    test::TempDir dir;
    RunStore store = RunStore::open(dir.file("class.sqlite"));
    WholeRun training = student_run();
    training.run.outcome.status = RunStatus::Running;
    EXPECT_NE(
        test::bad_input_message([&] { store.add_whole_run(training); }).find("still training"),
        std::string::npos);
    WholeRun nameless = student_run();
    nameless.uid.clear();
    EXPECT_NE(test::bad_input_message([&] { store.add_whole_run(nameless); }).find("uid"),
              std::string::npos);
    // A write that fails after the run's row and rows are in (its events refused): none of
    // it is kept, and the run can be added once the cause is gone.
    {
        test::RawDatabase raw(store.path());
        raw.exec(
            "CREATE TRIGGER refuse_events BEFORE INSERT ON events "
            "BEGIN SELECT RAISE(ABORT, 'refused for the test'); END");
    }
    EXPECT_THROW(store.add_whole_run(student_run()), std::exception);
    test::RawDatabase raw(store.path());
    EXPECT_EQ(raw.query_int("SELECT count(*) FROM runs"), 0);
    EXPECT_EQ(raw.query_int("SELECT count(*) FROM metrics"), 0);
    EXPECT_EQ(raw.query_int("SELECT count(*) FROM module_memory"), 0);
    raw.exec("DROP TRIGGER refuse_events");
    const std::int64_t id = store.add_whole_run(student_run());
    EXPECT_EQ(store.events(id).size(), 1u);
}

}  // namespace
}  // namespace oomlab
