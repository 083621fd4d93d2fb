// Opening files: connection settings, schema versions, migrations and files that are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "oomlab/common/errors.h"
#include "oomlab/common/paths.h"
#include "oomlab/store/run_store.h"
#include "raw_sqlite.h"
#include "store/run_store_impl.h"
#include "test_support.h"

namespace oomlab {
namespace {

// The schema version this build writes; bump together with a new migration.
constexpr int kLatestSchemaVersion = 10;

std::string bad_input_message(const std::string& path) {
    try {
        RunStore::open(path);
    } catch (const BadInput& error) {
        return error.what();
    }
    ADD_FAILURE() << "opening " << path << " did not throw BadInput";
    return "";
}

TEST(RunStoreSchemaTest, NewFileIsWalAtLatestVersion) {
    test::TempDir dir;
    const std::string path = dir.file("nested/folders/runs.sqlite");
    {
        RunStore store = RunStore::open(path);
        EXPECT_EQ(store.path(), path);
        EXPECT_EQ(store.schema_version(), kLatestSchemaVersion);
    }
    ASSERT_TRUE(std::filesystem::exists(path));
    test::RawDatabase raw(path);
    EXPECT_EQ(raw.query_text("PRAGMA journal_mode"), "wal");
    EXPECT_EQ(raw.query_int("PRAGMA user_version"), kLatestSchemaVersion);
    EXPECT_EQ(raw.query_int("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND "
                            "name = 'metrics_by_run_step'"),
              1);
}

// The columns the store writes and reads are declared once (table_declarations.h): a column
// the schema adds without a declaration, or a declaration of none, is caught here. Listed
// besides the declarations: each table's keys and what the store fills in itself.
class DeclaredColumns : public ::testing::Test {
protected:
    std::vector<std::string> schema_columns(const std::string& table) {
        RunStore::open(m_dir.file("runs.sqlite"));
        test::RawDatabase raw(m_dir.file("runs.sqlite"));
        return names(
            raw.query_text("SELECT group_concat(name) FROM pragma_table_info('" + table + "')"));
    }

    // The sorted names in one or more comma-separated lists.
    static std::vector<std::string> names(const std::string& list) {
        std::vector<std::string> result;
        std::istringstream in(list);
        for (std::string name; std::getline(in, name, ',');) {
            result.push_back(name.substr(name.find_first_not_of(' ')));
        }
        std::sort(result.begin(), result.end());
        result.erase(std::unique(result.begin(), result.end()), result.end());
        return result;
    }

private:
    test::TempDir m_dir;
};

TEST_F(DeclaredColumns, Metrics) {
    EXPECT_EQ(schema_columns("metrics"),
              names("id, run_id, " + store::column_list(store::kMetricColumns)));
}

TEST_F(DeclaredColumns, Events) {
    EXPECT_EQ(schema_columns("events"),
              names("id, run_id, created_at, " + store::column_list(store::kEventColumns)));
}

TEST_F(DeclaredColumns, Runs) {
    EXPECT_EQ(schema_columns("runs"),
              names("created_at, owner_host, owner_pid, owner_start_ticks, uid, " +
                    store::column_list(store::kNewRunColumns) + ", " +
                    store::column_list(store::kRunColumns) + ", " +
                    store::column_list(store::outcome_columns()) + ", " +
                    store::column_list(store::kFragmentationColumns)));
}

TEST_F(DeclaredColumns, ModuleMemoryAndStages) {
    EXPECT_EQ(schema_columns("module_memory"),
              names("run_id, " + store::column_list(store::kModuleMemoryColumns)));
    EXPECT_EQ(schema_columns("memory_stages"),
              names("run_id, rank, position, " + store::column_list(store::kStageColumns)));
}

TEST(RunStoreSchemaTest, EmptyVersionZeroFileIsMigrated) {
    test::TempDir dir;
    const std::string path = dir.file("runs.sqlite");
    test::write_file(path, "");  // a zero-byte file is an empty SQLite database
    RunStore store = RunStore::open(path);
    EXPECT_EQ(store.schema_version(), kLatestSchemaVersion);
    const std::int64_t id = store.create_run({"after migration", "{}", "cpu", "0.1.0", "none"});
    EXPECT_EQ(store.find_run(id)->name, "after migration");
}

TEST(RunStoreSchemaTest, ExistingFileAtKnownVersionKeepsItsRows) {
    test::TempDir dir;
    const std::string path = dir.file("runs.sqlite");
    std::int64_t id = 0;
    {
        RunStore store = RunStore::open(path);
        id = store.create_run({"kept", "{}", "cpu", "0.1.0", "none"});
        MetricRow row;
        row.step = 9;
        row.loss = 0.25;
        store.append_metrics(id, {row});
        RunOutcome outcome;
        outcome.steps = 9;
        store.finish_run(id, outcome);
    }
    {
        test::RawDatabase raw(path);
        ASSERT_EQ(raw.query_int("PRAGMA user_version"), kLatestSchemaVersion);
    }
    RunStore reopened = RunStore::open(path);
    const auto run = reopened.find_run(id);
    ASSERT_TRUE(run.has_value());
    EXPECT_EQ(run->name, "kept");
    EXPECT_EQ(run->outcome.status, RunStatus::Completed);
    EXPECT_EQ(run->outcome.steps, 9);
    const auto metrics = reopened.metrics(id);
    ASSERT_EQ(metrics.size(), 1u);
    EXPECT_EQ(metrics[0].loss, std::optional<double>(0.25));
}

TEST(RunStoreSchemaTest, VersionOneFileIsUpgradedWithoutLosingRuns) {
    // A database written by the first release (schema 1): two runs, their metrics and events.
    test::TempDir dir;
    const std::string path = dir.file("old.sqlite");
    std::filesystem::copy_file(test::fixture("store/runs-v1.sqlite"), path);
    {
        test::RawDatabase raw(path);
        ASSERT_EQ(raw.query_int("PRAGMA user_version"), 1);
    }
    RunStore store = RunStore::open(path);
    EXPECT_EQ(store.schema_version(), kLatestSchemaVersion);
    const auto runs = store.list_runs();
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(runs[1].name, "v1 bag");
    EXPECT_EQ(runs[1].outcome.status, RunStatus::Completed);
    EXPECT_EQ(runs[1].outcome.steps, 3);
    EXPECT_GT(runs[1].outcome.peak_bytes, 0);
    EXPECT_EQ(runs[1].world_size, 1);
    EXPECT_EQ(runs[0].name, "v1 oom");
    EXPECT_EQ(runs[0].outcome.status, RunStatus::Oom);
    const auto metrics = store.metrics(runs[1].id);
    EXPECT_EQ(metrics.size(), 17u);
    for (const auto& row : metrics) {
        EXPECT_EQ(row.rank, 0);
        EXPECT_EQ(row.alloc_retries, std::nullopt);  // not measured before version 3
        EXPECT_EQ(row.oom_count, std::nullopt);
    }
    EXPECT_FALSE(store.events(runs[0].id).empty());
    // The upgraded file takes new-version data.
    MetricRow ranked;
    ranked.step = 4;
    ranked.phase = "oom";
    ranked.rank = 3;
    ranked.device_total_bytes = std::int64_t{80} << 30;
    ranked.alloc_retries = 2;
    ranked.oom_count = 1;
    store.append_metrics(runs[1].id, {ranked});
    const MetricRow back = store.metrics(runs[1].id).back();
    EXPECT_EQ(back.rank, 3);
    EXPECT_EQ(back.device_total_bytes, std::int64_t{80} << 30);
    EXPECT_EQ(back.alloc_retries, 2);
    EXPECT_EQ(back.oom_count, 1);
}

TEST(RunStoreSchemaTest, NewerVersionIsRefusedWithAClearMessage) {
    test::TempDir dir;
    const std::string path = dir.file("future.sqlite");
    {
        test::RawDatabase raw(path);
        raw.exec("CREATE TABLE runs (id INTEGER PRIMARY KEY, shiny_new_column TEXT)");
        raw.exec("PRAGMA user_version = 99");
    }
    const std::string message = bad_input_message(path);
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find("newer"), std::string::npos) << message;
    EXPECT_NE(message.find("99"), std::string::npos) << message;
    test::RawDatabase raw(path);
    EXPECT_EQ(raw.query_int("PRAGMA user_version"), 99);  // left as it was
}

TEST(RunStoreSchemaTest, FileThatIsNotADatabaseIsRefusedAndLeftAlone) {
    test::TempDir dir;
    const std::string path = dir.file("notes.txt");
    std::string content;
    for (int i = 0; i < 100; ++i) {
        content += "this is a text file, not an SQLite database\n";
    }
    test::write_file(path, content);
    const std::string message = bad_input_message(path);
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find("not an OOM Lab run database"), std::string::npos) << message;
    EXPECT_EQ(test::read_text(path), content);
}

TEST(RunStoreSchemaTest, DatabaseOfAnotherProgramIsRefused) {
    test::TempDir dir;
    const std::string path = dir.file("other.sqlite");
    {
        test::RawDatabase raw(path);
        raw.exec("CREATE TABLE contacts (name TEXT)");
    }
    const std::string message = bad_input_message(path);
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find("another program"), std::string::npos) << message;
}

// Tables named as a run store's, with the runs table's config_json, but no version and no
// application id: another program's. Refused before a byte changes (it was switched to WAL
// first), and no -wal or -shm is left beside it.
TEST(RunStoreSchemaTest, AForeignFileWithRunTablesIsRefusedUnchanged) {
    test::TempDir dir;
    const std::string path = dir.file("other.sqlite");
    {
        test::RawDatabase raw(path);
        raw.exec("CREATE TABLE runs (id INTEGER PRIMARY KEY, name TEXT, config_json TEXT)");
        raw.exec("CREATE TABLE metrics (x)");
        raw.exec("CREATE TABLE events (y)");
    }
    const std::string before = test::read_text(path);
    const std::string message = bad_input_message(path);
    EXPECT_NE(message.find("another program"), std::string::npos) << message;
    EXPECT_EQ(test::read_text(path), before);
    EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
    EXPECT_FALSE(std::filesystem::exists(path + "-shm"));
}

// Our own file whose schema was damaged by something else: said at open, as damaged (not as
// another program's), with what is wrong; nothing in the file changes.
TEST(RunStoreSchemaTest, ADamagedSchemaIsRefusedAtOpenSayingWhatIsWrong) {
    const std::string latest = "(schema version " + std::to_string(kLatestSchemaVersion) + ")";
    const std::pair<std::string, std::string> damages[] = {
        {"PRAGMA user_version = 0", "its schema version is 0 (PRAGMA user_version)"},
        {"PRAGMA user_version = -1", "its schema version is -1 (PRAGMA user_version)"},
        {"DROP TABLE metrics", "table metrics is missing " + latest},
        {"DROP TABLE rank_outcomes", "table rank_outcomes is missing " + latest},
        {"PRAGMA user_version = 3", "its schema version is 3 (PRAGMA user_version), but it has "},
        {"ALTER TABLE events DROP COLUMN message", "table events has no column message"},
    };
    for (const auto& [damage, said] : damages) {
        test::TempDir dir;
        const std::string path = dir.file("runs.sqlite");
        {
            RunStore store = RunStore::open(path);
            store.create_run(NewRun{"kept", "{}", "cpu", "1", "1", 1});
        }
        {
            test::RawDatabase raw(path);
            raw.exec("PRAGMA journal_mode = DELETE");  // the whole file in one place
            raw.exec(damage);
        }
        const std::string before = test::read_text(path);
        const std::string message = bad_input_message(path);
        EXPECT_EQ(message.rfind(path + ": a damaged OOM Lab database: ", 0), 0u) << message;
        EXPECT_NE(message.find(said), std::string::npos) << damage << ": " << message;
        EXPECT_NE(message.find("Nothing was changed"), std::string::npos) << message;
        EXPECT_EQ(test::read_text(path), before) << damage;
    }
}

TEST(RunStoreSchemaTest, DefaultPathIsInTheUserDataFolder) {
    test::TempDir dir;
    const char* previous = std::getenv("XDG_DATA_HOME");
    const std::string saved = previous ? previous : "";
    setenv("XDG_DATA_HOME", dir.file("data").c_str(), 1);

    const std::string path = RunStore::default_path();
    EXPECT_EQ(path, dir.file("data") + "/oomlab/runs.sqlite");
    EXPECT_NO_THROW(RunStore::open(path));  // creates data/oomlab/
    EXPECT_TRUE(std::filesystem::exists(path));

    if (previous) {
        setenv("XDG_DATA_HOME", saved.c_str(), 1);
    } else {
        unsetenv("XDG_DATA_HOME");
    }
}

TEST(RunStoreSchemaTest, MovedStoreKeepsWorking) {
    test::TempDir dir;
    RunStore first = RunStore::open(dir.file("a.sqlite"));
    RunStore second = std::move(first);
    const std::int64_t id = second.create_run({"moved", "{}", "cpu", "", ""});
    EXPECT_EQ(second.find_run(id)->name, "moved");
    first = RunStore::open(dir.file("b.sqlite"));
    EXPECT_TRUE(first.list_runs().empty());
}

}  // namespace
}  // namespace oomlab
