// Runs, metrics and events written through RunStore come back unchanged.
#include <gtest/gtest.h>

#include <algorithm>

#include <unistd.h>

#include <chrono>
#include <functional>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "oomlab/common/errors.h"
#include "oomlab/run/run_json.h"
#include "oomlab/store/run_store.h"
#include "raw_sqlite.h"
#include "test_support.h"

namespace oomlab {
namespace {

NewRun sample_run(const std::string& name) {
    NewRun run;
    run.name = name;
    run.config_json = R"({"batch_size": 64, "model": "bag"})";
    run.device = "cuda:0 (NVIDIA H100 80GB HBM3)";
    run.engine_version = "0.1.0";
    run.torch_version = "1.13.0";
    return run;
}

MemoryBreakdown sample_breakdown() {
    MemoryBreakdown breakdown;
    for (std::size_t i = 0; i < kBreakdownKeys.size(); ++i) {
        breakdown_field(breakdown, i) = static_cast<std::int64_t>(i + 1) * 1'000'000'007;
    }
    return breakdown;
}

bool is_iso8601_utc_millis(const std::string& text) {
    static const std::regex pattern(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)");
    return std::regex_match(text, pattern);
}

class RunStoreTest : public ::testing::Test {
protected:
    test::TempDir m_dir;
    std::string m_path = m_dir.file("runs.sqlite");
    RunStore m_store = RunStore::open(m_path);
};

TEST_F(RunStoreTest, NewRunReadsBackAsRunning) {
    const std::int64_t id = m_store.create_run(sample_run("first"));
    const auto run = m_store.find_run(id);
    ASSERT_TRUE(run.has_value());
    EXPECT_EQ(run->id, id);
    EXPECT_EQ(run->name, "first");
    EXPECT_EQ(run->outcome.status, RunStatus::Running);
    EXPECT_EQ(run->config_json, R"({"batch_size": 64, "model": "bag"})");
    EXPECT_TRUE(is_iso8601_utc_millis(run->created_at)) << run->created_at;
    EXPECT_EQ(run->finished_at, "");
    EXPECT_EQ(run->device, "cuda:0 (NVIDIA H100 80GB HBM3)");
    EXPECT_EQ(run->engine_version, "0.1.0");
    EXPECT_EQ(run->torch_version, "1.13.0");
    EXPECT_EQ(run->outcome.error, "");
    EXPECT_EQ(run->notes, "");
    EXPECT_EQ(run->outcome.steps, 0);
    EXPECT_FALSE(run->outcome.final_train_loss.has_value());
    EXPECT_FALSE(run->outcome.val_accuracy.has_value());
    EXPECT_EQ(run->outcome.breakdown.total(), 0);
    EXPECT_FALSE(m_store.find_run(id + 1).has_value());
}

TEST_F(RunStoreTest, FinishedRunKeepsOutcomeAndBreakdown) {
    const std::int64_t id = m_store.create_run(sample_run("oom run"));
    RunOutcome outcome;
    outcome.status = RunStatus::Oom;
    outcome.error = "CUDA out of memory at step 42";
    outcome.steps = 42;
    outcome.final_train_loss = 0.6931;
    outcome.peak_bytes = 80'000'000'000;
    outcome.wall_seconds = 12.5;
    outcome.breakdown = sample_breakdown();
    m_store.finish_run(id, outcome);

    const auto run = m_store.find_run(id);
    ASSERT_TRUE(run.has_value());
    EXPECT_EQ(run->outcome.status, RunStatus::Oom);
    EXPECT_EQ(run->outcome.error, "CUDA out of memory at step 42");
    EXPECT_EQ(run->outcome.steps, 42);
    ASSERT_TRUE(run->outcome.final_train_loss.has_value());
    EXPECT_DOUBLE_EQ(*run->outcome.final_train_loss, 0.6931);
    EXPECT_FALSE(run->outcome.val_accuracy.has_value());
    EXPECT_EQ(run->outcome.peak_bytes, 80'000'000'000);
    EXPECT_DOUBLE_EQ(run->outcome.wall_seconds, 12.5);
    EXPECT_TRUE(is_iso8601_utc_millis(run->finished_at)) << run->finished_at;
    EXPECT_GE(run->finished_at, run->created_at);
    for (std::size_t i = 0; i < kBreakdownKeys.size(); ++i) {
        EXPECT_EQ(breakdown_field(run->outcome.breakdown, i),
                  static_cast<std::int64_t>(i + 1) * 1'000'000'007)
            << kBreakdownKeys[i];
    }

    // One column per category, so plain SQL can aggregate them.
    test::RawDatabase raw(m_path);
    EXPECT_EQ(
        raw.query_int("SELECT breakdown_activations FROM runs WHERE id = " + std::to_string(id)),
        6 * 1'000'000'007LL);
    EXPECT_EQ(raw.query_text("SELECT status FROM runs WHERE id = " + std::to_string(id)), "oom");
}

TEST_F(RunStoreTest, FinishingAMissingRunThrows) {
    EXPECT_THROW(m_store.finish_run(999, RunOutcome{}), Error);
    EXPECT_THROW(m_store.rename_run(999, "x"), Error);
    EXPECT_THROW(m_store.set_notes(999, "x"), Error);
    EXPECT_THROW(m_store.set_tags(999, "x"), Error);
    EXPECT_THROW(m_store.set_fix_of(999, 1), Error);
}

// A fix whose failed run was deleted while it trained is kept, without the link (the link
// failed on the foreign key and the command lost its summary).
TEST_F(RunStoreTest, AFixOfARunDeletedMeanwhileIsKeptWithoutTheLink) {
    const std::int64_t failed = m_store.create_run(sample_run("failed"));
    const std::int64_t fix = m_store.create_run(sample_run("fix"));
    ASSERT_TRUE(m_store.delete_run(failed));
    EXPECT_FALSE(m_store.set_fix_of(fix, failed));
    EXPECT_FALSE(m_store.find_run(fix)->fix_of);
    const std::int64_t again = m_store.create_run(sample_run("failed again"));
    EXPECT_TRUE(m_store.set_fix_of(fix, again));
    EXPECT_EQ(m_store.find_run(fix)->fix_of, again);
}

TEST_F(RunStoreTest, MetricsRoundTripWithAbsentFiguresAsNull) {
    const std::int64_t id = m_store.create_run(sample_run("metrics"));
    MetricRow full;
    full.step = 2;
    full.phase = "step";
    full.wall_ms = 15.25;
    full.loss = 0.5;
    full.accuracy = 0.875;
    full.allocated_bytes = 1'234'567'890'123;
    full.reserved_bytes = 2'000'000'000'000;
    full.peak_bytes = 1'500'000'000'000;
    full.device_used_bytes = 3'000'000'000'000;
    full.samples_per_s = 4096.5;
    MetricRow bare;
    bare.step = 1;
    bare.phase = "forward";
    bare.wall_ms = 3.0;
    MetricRow later_same_step = bare;
    later_same_step.step = 2;
    later_same_step.phase = "eval";
    m_store.append_metrics(id, {full, bare, later_same_step});

    const auto rows = m_store.metrics(id);
    ASSERT_EQ(rows.size(), 3u);
    // Ordered by step, then by insertion within a step.
    EXPECT_EQ(rows[0].step, 1);
    EXPECT_EQ(rows[0].phase, "forward");
    EXPECT_EQ(rows[1].phase, "step");
    EXPECT_EQ(rows[2].phase, "eval");

    const MetricRow& back = rows[1];
    EXPECT_EQ(back.step, 2);
    EXPECT_DOUBLE_EQ(back.wall_ms, 15.25);
    EXPECT_EQ(back.loss, std::optional<double>(0.5));
    EXPECT_EQ(back.accuracy, std::optional<double>(0.875));
    EXPECT_EQ(back.allocated_bytes, std::optional<std::int64_t>(1'234'567'890'123));
    EXPECT_EQ(back.reserved_bytes, std::optional<std::int64_t>(2'000'000'000'000));
    EXPECT_EQ(back.peak_bytes, std::optional<std::int64_t>(1'500'000'000'000));
    EXPECT_EQ(back.device_used_bytes, std::optional<std::int64_t>(3'000'000'000'000));
    EXPECT_EQ(back.samples_per_s, std::optional<double>(4096.5));

    const MetricRow& empty = rows[0];
    EXPECT_DOUBLE_EQ(empty.wall_ms, 3.0);
    EXPECT_FALSE(empty.loss || empty.accuracy || empty.allocated_bytes || empty.reserved_bytes ||
                 empty.peak_bytes || empty.device_used_bytes || empty.samples_per_s);

    test::RawDatabase raw(m_path);
    EXPECT_EQ(raw.query_int("SELECT count(*) FROM metrics WHERE loss IS NULL AND accuracy IS NULL "
                            "AND allocated_bytes IS NULL AND reserved_bytes IS NULL AND "
                            "peak_bytes IS NULL AND device_used_bytes IS NULL AND "
                            "samples_per_s IS NULL"),
              2);
}

// Following a run that other processes write: rows in the order written (rank 1's step 5
// may come after rank 0's step 6), each exactly once.
TEST_F(RunStoreTest, RowsAfterTheLastSeenComeInTheOrderWritten) {
    const std::int64_t id = m_store.create_run(sample_run("followed"));
    const auto row = [](std::int64_t step, int rank) {
        MetricRow metric;
        metric.step = step;
        metric.phase = "step";
        metric.rank = rank;
        return metric;
    };
    std::int64_t last_metric = 0;
    std::int64_t last_event = 0;
    m_store.append_metrics(id, {row(5, 0), row(6, 0)});
    m_store.add_event(id, {6, "note", "first"});
    std::vector<MetricRow> seen = m_store.metrics_after(id, last_metric);
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(m_store.events_after(id, last_event).size(), 1u);
    m_store.append_metrics(id, {row(5, 1)});
    m_store.add_event(id, {5, "note", "second"});
    seen = m_store.metrics_after(id, last_metric);
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].step, 5);
    EXPECT_EQ(seen[0].rank, 1);
    const std::vector<EventRow> events = m_store.events_after(id, last_event);
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].message, "second");
    EXPECT_TRUE(m_store.metrics_after(id, last_metric).empty());
    EXPECT_EQ(m_store.metrics(id).size(), 3u);
}

TEST_F(RunStoreTest, MetricsForAMissingRunAreRejectedAndNothingIsKept) {
    const std::int64_t id = m_store.create_run(sample_run("real"));
    std::vector<MetricRow> rows(10);
    EXPECT_THROW(m_store.append_metrics(id + 100, rows), Error);
    // The failed batch left nothing behind and the store still accepts the next one.
    m_store.append_metrics(id, rows);
    test::RawDatabase raw(m_path);
    EXPECT_EQ(raw.query_int("SELECT count(*) FROM metrics"), 10);
}

TEST_F(RunStoreTest, HundredThousandMetricsInOneCallAreAllStored) {
    const std::int64_t id = m_store.create_run(sample_run("big"));
    constexpr std::int64_t kRows = 100'000;
    std::vector<MetricRow> rows(kRows);
    for (std::int64_t i = 0; i < kRows; ++i) {
        rows[i].step = i;
        rows[i].phase = "step";
        rows[i].wall_ms = static_cast<double>(i) * 0.5;
        rows[i].loss = 1.0 / static_cast<double>(i + 1);
        rows[i].allocated_bytes = i * 4096;
        if (i % 2 == 0) {
            rows[i].samples_per_s = 1000.0 + static_cast<double>(i);
        }
    }
    const auto start = std::chrono::steady_clock::now();
    m_store.append_metrics(id, rows);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    RecordProperty("metric_rows_per_second", std::to_string(static_cast<long>(kRows / seconds)));

    const auto back = m_store.metrics(id);
    ASSERT_EQ(back.size(), static_cast<std::size_t>(kRows));
    for (std::int64_t i : {std::int64_t{0}, std::int64_t{1}, std::int64_t{54'321}, kRows - 1}) {
        EXPECT_EQ(back[i].step, i);
        EXPECT_DOUBLE_EQ(back[i].wall_ms, static_cast<double>(i) * 0.5);
        EXPECT_EQ(back[i].loss, std::optional<double>(1.0 / static_cast<double>(i + 1)));
        EXPECT_EQ(back[i].allocated_bytes, std::optional<std::int64_t>(i * 4096));
        EXPECT_EQ(back[i].samples_per_s.has_value(), i % 2 == 0);
    }
    test::RawDatabase raw(m_path);
    EXPECT_EQ(raw.query_int("SELECT count(*) FROM metrics WHERE run_id = " + std::to_string(id)),
              kRows);
}

// What a plot reads of the same run: a bounded number of rows, its peak among them, and the
// mean throughput of every row (the even rows', 1000 + i for even i: 1000 + 49,999).
TEST_F(RunStoreTest, ALongRunIsReadForAPlotInBoundedRowsWithItsPeak) {
    const std::int64_t id = m_store.create_run(sample_run("long"));
    constexpr std::int64_t kRows = 100'000;
    std::vector<MetricRow> rows(kRows);
    for (std::int64_t i = 0; i < kRows; ++i) {
        rows[i].step = i;
        rows[i].phase = "step";
        rows[i].allocated_bytes = i == 31'337 ? std::int64_t(1) << 40 : 4096 * (i % 7);
        if (i % 2 == 0) {
            rows[i].samples_per_s = 1000.0 + static_cast<double>(i);
        }
    }
    m_store.append_metrics(id, rows);
    const ThinnedMetrics thinned = m_store.thinned_metrics(id, 200);
    EXPECT_EQ(thinned.rows_read, static_cast<std::size_t>(kRows));
    EXPECT_LE(thinned.rows.size(), 200u * 4);
    ASSERT_TRUE(thinned.mean_samples_per_s);
    EXPECT_DOUBLE_EQ(*thinned.mean_samples_per_s, 1000.0 + 49'999.0);
    EXPECT_TRUE(std::any_of(thinned.rows.begin(), thinned.rows.end(), [](const MetricRow& row) {
        return row.step == 31'337 && row.allocated_bytes == std::int64_t(1) << 40;
    }));
    EXPECT_EQ(thinned.rows.back().step, kRows - 1);
}

TEST_F(RunStoreTest, EventsRoundTripInStepOrder) {
    const std::int64_t id = m_store.create_run(sample_run("events"));
    m_store.add_event(id, {7, "oom", "CUDA out of memory; tried to allocate 2.00 GiB"});
    m_store.add_event(id, {3, "adapt", "batch size 64 -> 32"});
    m_store.add_event(id, {7, "note", "retrying"});

    const auto events = m_store.events(id);
    ASSERT_EQ(events.size(), 3u);
    EXPECT_EQ(events[0].step, 3);
    EXPECT_EQ(events[0].kind, "adapt");
    EXPECT_EQ(events[0].message, "batch size 64 -> 32");
    EXPECT_EQ(events[1].kind, "oom");
    EXPECT_EQ(events[1].message, "CUDA out of memory; tried to allocate 2.00 GiB");
    EXPECT_EQ(events[2].kind, "note");
    EXPECT_TRUE(m_store.events(id + 1).empty());

    test::RawDatabase raw(m_path);
    const std::string created = raw.query_text("SELECT created_at FROM events LIMIT 1");
    EXPECT_TRUE(is_iso8601_utc_millis(created)) << created;
}

TEST_F(RunStoreTest, DeletingARunDeletesItsMetricsAndEvents) {
    const std::int64_t doomed = m_store.create_run(sample_run("doomed"));
    const std::int64_t kept = m_store.create_run(sample_run("kept"));
    for (std::int64_t id : {doomed, kept}) {
        m_store.append_metrics(id, std::vector<MetricRow>(5));
        m_store.add_event(id, {0, "note", "hello"});
        m_store.finish_run(id, RunOutcome{});
    }

    EXPECT_TRUE(m_store.delete_run(doomed));
    EXPECT_FALSE(m_store.find_run(doomed).has_value());
    EXPECT_TRUE(m_store.metrics(doomed).empty());
    EXPECT_TRUE(m_store.events(doomed).empty());
    EXPECT_EQ(m_store.metrics(kept).size(), 5u);
    EXPECT_EQ(m_store.events(kept).size(), 1u);

    test::RawDatabase raw(m_path);
    EXPECT_EQ(raw.query_int("SELECT count(*) FROM metrics"), 5);
    EXPECT_EQ(raw.query_int("SELECT count(*) FROM events"), 1);
    EXPECT_FALSE(m_store.delete_run(doomed));
}

// A run still being written is not deleted under its writer (which would fail at its next
// write): the refusal says which process trains it and how to stop it. Once it has ended, or
// its writer is gone (the run reads back interrupted), it can be.
TEST_F(RunStoreTest, ARunStillTrainingIsNotDeleted) {
    const std::int64_t training = m_store.create_run(sample_run("training"));
    RunStore other = RunStore::open(m_path);  // `runs delete` in another process
    try {
        other.delete_run(training);
        FAIL() << "deleted a run its writer still trains";
    } catch (const BadInput& error) {
        const std::string message = error.what();
        EXPECT_NE(message.find("run " + std::to_string(training) + " of " + m_path +
                               " is still training (process " + std::to_string(getpid())),
                  std::string::npos)
            << message;
        EXPECT_NE(message.find("stop it first"), std::string::npos) << message;
    }
    m_store.append_metrics(training, std::vector<MetricRow>(3));
    EXPECT_EQ(m_store.metrics(training).size(), 3u) << "the writer goes on";
    m_store.finish_run(training, RunOutcome{});
    EXPECT_TRUE(other.delete_run(training));
}

// A run of several processes peaks where its highest rank peaks, whichever rank ends last.
TEST_F(RunStoreTest, ARunOfSeveralRanksPeaksAtItsHighestRank) {
    for (const bool rank0_last : {true, false}) {
        NewRun two = sample_run("two ranks");
        two.world_size = 2;
        const std::int64_t id = m_store.create_run(two);
        RunOutcome rank0;
        rank0.peak_bytes = 100 << 20;
        RunOutcome rank1;
        rank1.peak_bytes = 130 << 20;
        if (rank0_last) {
            m_store.finish_rank(id, 1, rank1);
            m_store.finish_run(id, rank0);
        } else {
            m_store.finish_run(id, rank0);
            m_store.finish_rank(id, 1, rank1);
        }
        const RunRecord run = *m_store.find_run(id);
        EXPECT_EQ(run.outcome.peak_bytes, 130 << 20) << "rank 0 last: " << rank0_last;
        ASSERT_EQ(run.ranks.size(), 2u);
        EXPECT_EQ(run.ranks[0].peak_bytes, 100 << 20);
        EXPECT_EQ(run.ranks[1].peak_bytes, 130 << 20);
    }
}

TEST_F(RunStoreTest, RenameNotesAndTags) {
    const std::int64_t id = m_store.create_run(sample_run("before"));
    m_store.rename_run(id, "after");
    m_store.set_notes(id, "batch 64 fits; 128 does not");
    m_store.set_tags(id, "baseline, imdb");
    const auto run = m_store.find_run(id);
    ASSERT_TRUE(run.has_value());
    EXPECT_EQ(run->name, "after");
    EXPECT_EQ(run->notes, "batch 64 fits; 128 does not");
    EXPECT_EQ(run->tags, "baseline, imdb");
    EXPECT_TRUE(run->tracker_tags.empty());
}

// A lesson's run keeps the tags a tracker gets with it (its lesson, the student's
// prediction), read back as written; a damaged text reads as none, not as an error.
TEST_F(RunStoreTest, TrackerTagsAreKeptWithTheRun) {
    const std::int64_t id = m_store.create_run(sample_run("lesson"));
    const std::map<std::string, std::string> tags = {
        {"oomlab.lesson", "batch-size"}, {"oomlab.prediction", R"({"run":1,"second":2})"}};
    m_store.set_tracker_tags(id, tags);
    EXPECT_EQ(m_store.find_run(id)->tracker_tags, tags);
    m_store.set_tracker_tags(id, {});
    EXPECT_TRUE(m_store.find_run(id)->tracker_tags.empty());
    EXPECT_THROW(m_store.set_tracker_tags(999, tags), Error);
    EXPECT_TRUE(parse_tracker_tags("{not json").empty());
    EXPECT_TRUE(parse_tracker_tags("[1, 2]").empty());
}

// The text a run carries reaches JSON, CSV and the workbench: bytes that are not UTF-8 are
// refused by every write, naming the field, and leave the run as it was.
TEST_F(RunStoreTest, TextThatIsNotUtf8IsRefusedByEveryWrite) {
    const std::string latin1 = "caf\xE9";
    const auto refuses = [](const std::function<void()>& write, const std::string& field) {
        try {
            write();
            ADD_FAILURE() << field << ": accepted";
        } catch (const BadInput& error) {
            EXPECT_NE(
                std::string(error.what()).find(field + ": the value is not valid UTF-8 (byte 4)"),
                std::string::npos)
                << error.what();
        }
    };
    NewRun bad = sample_run("x");
    bad.name = latin1;
    refuses([&] { m_store.create_run(bad); }, "run name");
    EXPECT_TRUE(m_store.list_runs().empty());

    const std::int64_t id = m_store.create_run(sample_run("kept"));
    refuses([&] { m_store.rename_run(id, latin1); }, "run name");
    refuses([&] { m_store.set_notes(id, latin1); }, "run notes");
    refuses([&] { m_store.set_tags(id, latin1); }, "run tags");
    const auto run = m_store.find_run(id);
    EXPECT_EQ(run->name, "kept");
    EXPECT_EQ(run->notes, "");
    EXPECT_EQ(run->tags, "");
}

TEST_F(RunStoreTest, ListsNewestFirstAndFilters) {
    const std::int64_t alpha = m_store.create_run(sample_run("alpha 1"));
    const std::int64_t beta = m_store.create_run(sample_run("beta"));
    const std::int64_t alpha2 = m_store.create_run(sample_run("Alpha_2"));
    const std::int64_t percent = m_store.create_run(sample_run("100% data"));
    RunOutcome completed;
    m_store.finish_run(alpha, completed);
    m_store.finish_run(beta, completed);
    RunOutcome oom;
    oom.status = RunStatus::Oom;
    m_store.finish_run(alpha2, oom);

    auto ids = [](const std::vector<RunRecord>& runs) {
        std::vector<std::int64_t> result;
        for (const auto& run : runs) {
            result.push_back(run.id);
        }
        return result;
    };
    using Ids = std::vector<std::int64_t>;
    EXPECT_EQ(ids(m_store.list_runs()), (Ids{percent, alpha2, beta, alpha}));

    RunFilter filter;
    filter.status = RunStatus::Completed;
    EXPECT_EQ(ids(m_store.list_runs(filter)), (Ids{beta, alpha}));
    filter.status = RunStatus::Running;
    EXPECT_EQ(ids(m_store.list_runs(filter)), (Ids{percent}));

    filter = {};
    filter.name_contains = "alpha";  // case-insensitive
    EXPECT_EQ(ids(m_store.list_runs(filter)), (Ids{alpha2, alpha}));
    filter.name_contains = "_";  // literal, not a LIKE wildcard
    EXPECT_EQ(ids(m_store.list_runs(filter)), (Ids{alpha2}));
    filter.name_contains = "%";
    EXPECT_EQ(ids(m_store.list_runs(filter)), (Ids{percent}));
    filter.name_contains = "alpha";
    filter.status = RunStatus::Completed;
    EXPECT_EQ(ids(m_store.list_runs(filter)), (Ids{alpha}));

    filter = {};
    filter.limit = 2;
    EXPECT_EQ(ids(m_store.list_runs(filter)), (Ids{percent, alpha2}));
}

TEST(RunStatusTest, NamesRoundTrip) {
    for (RunStatus status : {RunStatus::Running, RunStatus::Completed, RunStatus::Oom,
                             RunStatus::Failed, RunStatus::Cancelled, RunStatus::Interrupted}) {
        EXPECT_EQ(parse_run_status(run_status_name(status)), status);
    }
    EXPECT_EQ(run_status_name(RunStatus::Oom), "oom");
    EXPECT_EQ(run_status_name(RunStatus::Interrupted), "interrupted");
    EXPECT_FALSE(parse_run_status("Completed").has_value());
    EXPECT_FALSE(parse_run_status("").has_value());
}

}  // namespace
}  // namespace oomlab
