// Commands about runs already saved: they read the database they are given and never make
// one, and a fix names a run that is there and did not complete.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "oomlab/store/run_store.h"
#include "test_support.h"

namespace oomlab {
namespace {

using test::run_cli;

class SavedRuns : public ::testing::Test {
protected:
    std::string db() const { return m_dir.file("runs.sqlite"); }
    std::string file(const std::string& name) const { return m_dir.file(name); }
    // A database holding one completed run.
    void make_database() {
        ASSERT_EQ(run_cli({"run", "--set", "train.max_steps=2", "--db", db()}).exit_code, 0);
    }
    std::size_t run_count() const { return RunStore::open(db()).list_runs().size(); }
    test::TempDir m_dir;
};

// A command about saved runs never creates a database: a mistyped --db is named, and the
// folder holds no new file.
TEST_F(SavedRuns, ReadingAMistypedDatabaseCreatesNothing) {
    const std::string missing = file("runs.sqlte");
    using Args = std::vector<std::string>;
    for (const Args& command : {Args{"runs", "list"}, Args{"runs", "show", "1"},
                                Args{"runs", "export", "1"}, Args{"runs", "diff", "1", "2"},
                                Args{"runs", "tag", "1", "x"}, Args{"runs", "delete", "1"}}) {
        Args args = command;
        args.insert(args.end(), {"--db", missing});
        const auto refused = run_cli(args);
        EXPECT_EQ(refused.exit_code, 2) << command[1];
        EXPECT_NE(refused.err.find("there is no run database at " + missing), std::string::npos)
            << refused.err;
        EXPECT_TRUE(std::filesystem::is_empty(m_dir.path())) << command[1];
    }
}

// A fix names the run it is for: one that is not there is refused before any rank starts
// (rank 1 waited out the rendezvous), and so is one that completed (a fix of it was never
// listed).
TEST_F(SavedRuns, AFixIsForARunThereThatDidNotComplete) {
    make_database();
    const auto missing = run_cli({"run", "--nproc", "2", "--db", db(), "--fix-of", "999", "--set",
                                  "train.max_steps=2", "--set", "distributed.timeout_s=20"});
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_NE(missing.err.find("--fix-of: " + db() + " has no run 999"), std::string::npos)
        << missing.err;
    EXPECT_EQ(missing.err.find("rendezvous"), std::string::npos) << missing.err;
    const auto completed =
        run_cli({"run", "--db", db(), "--fix-of", "1", "--set", "train.max_steps=2"});
    EXPECT_EQ(completed.exit_code, 2);
    EXPECT_NE(completed.err.find("--fix-of: run 1 completed"), std::string::npos) << completed.err;
    EXPECT_EQ(run_count(), 1u);
}

}  // namespace
}  // namespace oomlab
