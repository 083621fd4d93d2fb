// `oomlab-cli snapshot sql`: a snapshot as SQL tables that add up to what `snapshot show` finds,
// on a run's snapshot and on real ones other programs recorded.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"
#include "test_support.h"

namespace oomlab {
namespace {

using nlohmann::json;
using test::run_cli;

class SnapshotSqlCli : public ::testing::Test {
protected:
    std::string db() const { return m_dir.file("runs.sqlite"); }
    test::TempDir m_dir;
};

// A snapshot as SQL tables: what was alive at the peak, as the at_peak view adds it up, is the
// peak `snapshot show` found by its own replay, on a run's snapshot and on real snapshots
// another program recorded on a GPU (a trace begun late, a history without a trace), where
// what no frame names has the same name; a query answers as a table or
// CSV; a query that writes, or two, are refused; --out keeps a database that is queried again
// without the snapshot, and never replaces a file of the user's.
TEST_F(SnapshotSqlCli, SnapshotSqlAddsUpToThePeakShowFinds) {
    const std::string snapshot = db() + ".pickle";
    ASSERT_EQ(run_cli({"run", "--db", db(), "--set", "train.max_steps=3", "--set",
                       "debug.memory_snapshot=" + snapshot})
                  .exit_code,
              0);
    const std::string wild = std::string(test::source_root()) +
                             "/tests/data/wild/snapshots/bcrafton__assignment2-systems__memory_"
                             "snapshot.pickle";
    const std::string untraced = std::string(test::source_root()) +
                                 "/tests/data/wild/snapshots/volcengine__verl__mem.pickle";
    const std::string sum_at_peak =
        "SELECT d.peak_allocated, (SELECT sum(size) FROM at_peak a WHERE a.device = d.device) "
        "AS alive FROM devices d";
    const std::string unnamed = "SELECT line FROM at_peak WHERE line LIKE '(allocated %'";
    for (const std::string& file : {snapshot, wild, untraced}) {
        const auto shown = run_cli({"snapshot", "show", file, "--json"});
        ASSERT_EQ(shown.exit_code, 0) << shown.err;
        const json device = json::parse(shown.out)["devices"][0];
        const std::string peak = std::to_string(device["peak_allocated_bytes"].get<std::int64_t>());
        const auto summed = run_cli({"snapshot", "sql", file, sum_at_peak, "--csv"});
        ASSERT_EQ(summed.exit_code, 0) << summed.err;
        EXPECT_EQ(summed.out, "peak_allocated,alive\n" + peak + "," + peak + "\n") << file;
        // What no frame names is the row `show` names so (the history off, or a late trace).
        std::string named_so = "line\n";
        for (const json& line : device["at_peak"]) {
            const std::string where = line["where"].get<std::string>();
            named_so += where.rfind("(allocated ", 0) == 0 ? where + "\n" : "";
        }
        EXPECT_EQ(run_cli({"snapshot", "sql", file, unnamed, "--csv"}).out, named_so) << file;
    }

    const auto table = run_cli({"snapshot", "sql", snapshot,
                                "SELECT kind, sum(size) AS bytes FROM at_peak GROUP BY kind "
                                "ORDER BY bytes DESC"});
    ASSERT_EQ(table.exit_code, 0) << table.err;
    EXPECT_EQ(table.out.rfind("kind ", 0), 0u) << table.out;
    EXPECT_NE(table.out.find("optimizer step"), std::string::npos) << table.out;
    const auto schema = run_cli({"snapshot", "sql", snapshot});
    for (const char* named : {"events", "stacks", "segments", "blocks", "allocations", "at_peak"}) {
        EXPECT_NE(schema.out.find(named), std::string::npos) << named << "\n" << schema.out;
    }
    for (const char* refused :
         {"DELETE FROM events", "SELECT 1; SELECT 2", "SELECT * FROM nothing"}) {
        const auto answer = run_cli({"snapshot", "sql", snapshot, refused});
        EXPECT_EQ(answer.exit_code, 2) << refused << "\n" << answer.out;
        EXPECT_EQ(answer.err.rfind("error: QUERY: ", 0), 0u) << answer.err;
    }

    const std::string kept = db() + ".snapshot.db";
    ASSERT_EQ(run_cli({"snapshot", "sql", snapshot, "--out", kept}).exit_code, 0);
    const auto again = run_cli({"snapshot", "sql", kept, "SELECT count(*) FROM devices", "--csv"});
    EXPECT_EQ(again.out, "count(*)\n1\n") << again.err;
    const std::string mine = db() + ".mine.db";
    test::write_file(mine, "my notes\n");
    EXPECT_EQ(run_cli({"snapshot", "sql", snapshot, "--out", mine}).exit_code, 2);
    EXPECT_EQ(test::read_text(mine), "my notes\n");
}

}  // namespace
}  // namespace oomlab
