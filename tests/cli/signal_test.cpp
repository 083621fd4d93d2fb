// Ctrl+C (SIGINT) or a kill/scheduler (SIGTERM) during `oomlab-cli run`: the run is saved as
// cancelled with its metrics, exit 130.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "foreign_server.h"
#include "oomlab/launch/rendezvous.h"
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

// Trains a run of `model` (model.kind), stops it with `signal` once it has written metrics, and
// checks it was saved as cancelled with them, exit 130.
void stopAndCheckSaved(int signal, const char* model) {
    test::TempDir dir;
    const std::string db = dir.file("runs.sqlite");
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        const std::string kind = std::string("model.kind=") + model;
        execl(test::cli_program(), test::cli_program(), "run", "--db", db.c_str(), "--set",
              "train.epochs=1000", "--set", kind.c_str(), "--json", static_cast<char*>(nullptr));
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
    kill(child, signal);
    int status = 0;
    waitpid(child, &status, 0);
    ASSERT_TRUE(WIFEXITED(status)) << "ended by signal " << WTERMSIG(status);
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

TEST_P(CliSignals, SavesTheRunAsCancelledAndExits130) {
    stopAndCheckSaved(GetParam(), "bag");
}

// A BiLSTM's matrix products run in oneDNN's generated kernels: a signal handler run on top of
// one corrupted the heap a third of the time (exit 134). The signals now reach a thread that
// only waits.
TEST_P(CliSignals, StopsABiLstmInItsMatrixProducts) {
    stopAndCheckSaved(GetParam(), "bilstm");
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
        unsetenv("OOMLAB_ENGINE_SERVER");  // its own process: the test looks for its children
        execl(test::cli_program(), test::cli_program(), "find-batch-size", "--nproc", "2", "--set",
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

// Whether something accepts connections on 127.0.0.1:`port`.
bool listening(int port) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    const bool accepted = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    close(fd);
    return accepted;
}

// `oomlab-cli run` as rank `rank` of 2 meeting at 127.0.0.1:`port` (torchrun's variables),
// waiting up to 120 s for the others; its standard error goes to `err`.
pid_t start_rank(int rank, int port, const std::string& db, const std::string& err) {
    const pid_t child = fork();
    if (child == 0) {
        setenv("WORLD_SIZE", "2", 1);
        setenv("RANK", std::to_string(rank).c_str(), 1);
        setenv("MASTER_ADDR", "127.0.0.1", 1);
        setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
        if (!freopen(err.c_str(), "w", stderr)) {
            _exit(126);
        }
        execl(test::cli_program(), test::cli_program(), "run", "--db", db.c_str(), "--set",
              "distributed.timeout_s=120", static_cast<char*>(nullptr));
        _exit(127);
    }
    return child;
}

// A rank waiting for the others of its run (rank 0 for a rank that never comes; rank 1 held
// by a program on MASTER_PORT that is not a store) stops at once on SIGINT or SIGTERM, with
// 130 and nothing recorded, not at the end of distributed.timeout_s.
TEST_P(CliSignals, ARankWaitingForTheOthersStopsAtOnce) {
    test::TempDir dir;
    const std::string db = dir.file("runs.sqlite");
    const int port = free_loopback_port();
    const pid_t waiting = start_rank(0, port, db, dir.file("rank0.err"));
    ASSERT_GT(waiting, 0);
    for (int attempt = 0; attempt < 600 && !listening(port); ++attempt) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_TRUE(listening(port)) << "rank 0 never served the rendezvous";

    // Silent: a client that validates the store (PyTorch 2.x) waits for its answer too.
    const test::ForeignServer foreign(test::ForeignServer::Behaviour::Silent);
    const pid_t held =
        start_rank(1, foreign.port(), dir.file("other.sqlite"), dir.file("rank1.err"));
    ASSERT_GT(held, 0);
    for (int attempt = 0; attempt < 600 && foreign.accepted() == 0; ++attempt) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_GT(foreign.accepted(), 0) << "rank 1 never reached MASTER_PORT";
    for (const pid_t rank : {waiting, held}) {
        kill(rank, GetParam());
        int status = 0;
        waitpid(rank, &status, 0);
        const std::string err =
            test::read_text(dir.file(rank == waiting ? "rank0.err" : "rank1.err"));
        ASSERT_TRUE(WIFEXITED(status)) << err;
        EXPECT_EQ(WEXITSTATUS(status), 130) << err;
        EXPECT_NE(err.find("nothing was recorded"), std::string::npos) << err;
    }
    EXPECT_TRUE(RunStore::open(db).list_runs().empty());
}

}  // namespace
}  // namespace oomlab
