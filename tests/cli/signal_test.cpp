// Ctrl+C (SIGINT) or a kill/scheduler (SIGTERM) during `oomlab-cli run`: the run is saved as
// cancelled with its metrics, exit 130.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "oomlab/store/run_store.h"
#include "test_support.h"

namespace oomlab {
namespace {

class CliSignals : public ::testing::TestWithParam<int> {};

// Whether any process has `parent` as its parent (from /proc/PID/stat).
bool has_children(pid_t parent) {
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        std::ifstream stat(entry.path() / "stat");
        std::string text;
        if (!std::getline(stat, text)) {
            continue;
        }
        const std::size_t end_of_name = text.rfind(')');
        std::istringstream fields(text.substr(end_of_name + 2));
        char state = 0;
        long ppid = 0;
        if (end_of_name != std::string::npos && fields >> state >> ppid && ppid == parent) {
            return true;
        }
    }
    return false;
}

TEST_P(CliSignals, SavesTheRunAsCancelledAndExits130) {
    test::TempDir dir;
    const std::string db = dir.file("runs.sqlite");
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        execl(OOMLAB_CLI_PATH, OOMLAB_CLI_PATH, "run", "--db", db.c_str(), "--set",
              "train.epochs=1000", "--json", static_cast<char*>(nullptr));
        _exit(127);
    }
    // Wait until the run has written metrics, then interrupt it.
    bool training = false;
    for (int attempt = 0; attempt < 300 && !training; ++attempt) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        try {
            const RunStore store = RunStore::open(db);
            const auto runs = store.list_runs();
            training = !runs.empty() && store.metrics(runs.front().id).size() > 20;
        } catch (const std::exception&) {
            // The database may not exist yet.
        }
    }
    ASSERT_TRUE(training) << "the run never started";
    kill(child, GetParam());
    int status = 0;
    waitpid(child, &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 130);

    const RunStore store = RunStore::open(db);
    const auto runs = store.list_runs();
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].outcome.status, RunStatus::Cancelled);
    EXPECT_FALSE(runs[0].finished_at.empty());
    const auto metrics = store.metrics(runs[0].id);
    std::int64_t last_step = 0;
    for (const auto& row : metrics) {
        if (row.phase == "step") {
            last_step = std::max(last_step, row.step);
        }
    }
    EXPECT_EQ(runs[0].outcome.steps, last_step);
    EXPECT_GT(runs[0].outcome.steps, 0);
}

INSTANTIATE_TEST_SUITE_P(Stop, CliSignals, ::testing::Values(SIGINT, SIGTERM),
                         [](const ::testing::TestParamInfo<int>& signal) {
                             return signal.param == SIGINT ? "Sigint" : "Sigterm";
                         });

// A search of two processes has nothing to save: stopped, it ends there with 130, no worker
// reported as killed.
TEST(CliSignals, ASearchOfSeveralProcessesStopsWith130) {
    int pipe_fds[2];
    ASSERT_EQ(pipe(pipe_fds), 0);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        dup2(pipe_fds[1], STDOUT_FILENO);
        dup2(pipe_fds[1], STDERR_FILENO);
        close(pipe_fds[0]);
        execl(OOMLAB_CLI_PATH, OOMLAB_CLI_PATH, "find-batch-size", "--nproc", "2", "--set",
              "memory.cap_mb=24", static_cast<char*>(nullptr));
        _exit(127);
    }
    close(pipe_fds[1]);
    // Stopped as soon as its workers exist (it handles signals from then on): the search
    // cannot have ended, however fast this machine is.
    for (int attempt = 0; attempt < 3000 && !has_children(child); ++attempt) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_TRUE(has_children(child)) << "no worker was started";
    kill(child, SIGTERM);
    int status = 0;
    waitpid(child, &status, 0);
    std::string output;
    char buffer[4096];
    for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof buffer)) > 0;) {
        output.append(buffer, static_cast<std::size_t>(n));
    }
    close(pipe_fds[0]);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 130) << output;
    EXPECT_EQ(output.find("killed by signal"), std::string::npos) << output;
    EXPECT_EQ(output.find("largest micro-batch"), std::string::npos) << "it went on: " << output;
}

}  // namespace
}  // namespace oomlab
