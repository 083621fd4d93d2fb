// A killed writer, and a reader beside a live writer: the database survives both.
#include <gtest/gtest.h>

#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "oomlab/store/run_store.h"
#include "test_support.h"

namespace oomlab {
namespace {

pid_t start_long_run(const std::string& db) {
    const pid_t child = fork();
    if (child == 0) {
        // Quiet: the test reads the database, not the output.
        if (!freopen("/dev/null", "w", stdout)) {
            _exit(126);
        }
        // Its own process: killed, a copy in the engine server would outlive it by a moment.
        unsetenv("OOMLAB_ENGINE_SERVER");
        execl(test::cli_program(), test::cli_program(), "run", "--db", db.c_str(), "--set",
              "train.epochs=1000", "--set", "model.kind=transformer", "--set", "train.max_len=32",
              static_cast<char*>(nullptr));
        _exit(127);
    }
    return child;
}

std::size_t step_rows(const RunStore& store, std::int64_t run) {
    std::size_t count = 0;
    for (const auto& row : store.metrics(run)) {
        count += row.phase == "step";
    }
    return count;
}

// Waits until the run has at least `rows` step metrics; the run's id, or 0.
std::int64_t wait_for_metrics(const std::string& db, std::size_t rows) {
    for (int attempt = 0; attempt < 600; ++attempt) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        try {
            const RunStore store = RunStore::open(db);
            const auto runs = store.list_runs();
            if (!runs.empty() && step_rows(store, runs.front().id) >= rows) {
                return runs.front().id;
            }
        } catch (const std::exception&) {
        }
    }
    return 0;
}

std::string integrity(const std::string& db) {
    sqlite3* handle = nullptr;
    sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* statement = nullptr;
    sqlite3_prepare_v2(handle, "PRAGMA integrity_check", -1, &statement, nullptr);
    std::string result = "no answer";
    if (sqlite3_step(statement) == SQLITE_ROW) {
        result = reinterpret_cast<const char*>(sqlite3_column_text(statement, 0));
    }
    sqlite3_finalize(statement);
    sqlite3_close(handle);
    return result;
}

TEST(CrashSafety, SigkillMidRunLeavesAnIntactDatabaseAndAnInterruptedRun) {
    test::TempDir dir;
    const std::string db = dir.file("runs.sqlite");
    const pid_t child = start_long_run(db);
    const std::int64_t run = wait_for_metrics(db, 30);
    ASSERT_NE(run, 0) << "the run never wrote metrics";
    kill(child, SIGKILL);
    int status = 0;
    waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status));

    EXPECT_EQ(integrity(db), "ok");
    const RunStore store = RunStore::open(db);  // a new process's view: marks the dead writer
    const auto record = store.find_run(run);
    ASSERT_TRUE(record);
    EXPECT_EQ(record->outcome.status, RunStatus::Interrupted);
    EXPECT_FALSE(record->finished_at.empty());
    // Every flushed batch is whole: step rows 1..n with no gap, n at least what we saw.
    std::vector<std::int64_t> steps;
    for (const auto& row : store.metrics(run)) {
        if (row.phase == "step") {
            steps.push_back(row.step);
        }
    }
    ASSERT_GE(steps.size(), 30u);
    for (std::size_t i = 0; i < steps.size(); ++i) {
        EXPECT_EQ(steps[i], static_cast<std::int64_t>(i + 1));
    }
}

TEST(CrashSafety, AReaderProcessSeesALiveRunGrowWithoutErrors) {
    test::TempDir dir;
    const std::string db = dir.file("runs.sqlite");
    const pid_t writer = start_long_run(db);
    const std::int64_t run = wait_for_metrics(db, 5);
    ASSERT_NE(run, 0);
    // This test process is the second process: it opens, reads and closes repeatedly, as the
    // GUI does, while the CLI writes a flush every ~100 ms.
    // Reads until the run has visibly grown a few times (flushes are ~100 ms apart, slower
    // under sanitizers), for at most 30 s.
    std::size_t last = 0;
    int increases = 0;
    for (int read = 0; read < 600 && increases < 5; ++read) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        const RunStore store = RunStore::open(db);
        const auto record = store.find_run(run);
        ASSERT_TRUE(record);
        EXPECT_EQ(record->outcome.status, RunStatus::Running);  // never mistaken for a dead writer
        const std::size_t rows = step_rows(store, run);
        EXPECT_GE(rows, last);
        increases += rows > last;
        last = rows;
    }
    EXPECT_EQ(increases, 5);
    kill(writer, SIGINT);
    int status = 0;
    waitpid(writer, &status, 0);
    EXPECT_EQ(WEXITSTATUS(status), 130);
    EXPECT_EQ(RunStore::open(db).find_run(run)->outcome.status, RunStatus::Cancelled);
}

}  // namespace
}  // namespace oomlab
