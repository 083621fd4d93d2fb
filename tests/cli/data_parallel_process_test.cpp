// Data-parallel runs as processes: a killed worker or launcher takes the run down with it,
// leaving no process behind, and Ctrl+C stops every rank at the same step with the run saved.
#include <gtest/gtest.h>

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <thread>

#include "cli_runner.h"
#include "oomlab/store/run_store.h"
#include "test_support.h"

namespace oomlab {
namespace {

// The pids of the launcher's children (its workers).
std::vector<pid_t> children_of(pid_t parent) {
    std::vector<pid_t> children;
    DIR* proc = opendir("/proc");
    while (dirent* entry = readdir(proc)) {
        const pid_t pid = static_cast<pid_t>(std::atoi(entry->d_name));
        if (pid <= 0) {
            continue;
        }
        std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
        std::string line;
        std::getline(stat, line);
        const std::size_t close = line.rfind(')');
        if (close == std::string::npos) {
            continue;
        }
        std::istringstream fields(line.substr(close + 2));
        std::string state;
        pid_t ppid = 0;
        fields >> state >> ppid;
        if (ppid == parent) {
            children.push_back(pid);
        }
    }
    closedir(proc);
    return children;
}

bool alive(pid_t pid) {
    return kill(pid, 0) == 0;
}

struct Launched {
    pid_t pid;
    std::string err_file;
};

Launched launch_long_run(const test::TempDir& dir, const std::string& db) {
    const std::string err = dir.file("stderr");
    const pid_t child = fork();
    if (child == 0) {
        setpgid(0, 0);  // its own process group, as a command started from a shell has
        // Its own process too: the test finds the workers among the launcher's children.
        unsetenv("OOMLAB_ENGINE_SERVER");
        if (!freopen("/dev/null", "w", stdout) || !freopen(err.c_str(), "w", stderr)) {
            _exit(126);
        }
        execl(test::cli_program(), test::cli_program(), "run", "--nproc", "2", "--db", db.c_str(),
              "--set", "train.epochs=1000", "--set", "distributed.timeout_s=10",
              static_cast<char*>(nullptr));
        _exit(127);
    }
    return {child, err};
}

// Waits until both ranks wrote step rows; the run's id, or 0.
std::int64_t wait_for_both_ranks(const std::string& db) {
    for (int attempt = 0; attempt < 1200; ++attempt) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        try {
            const RunStore store = RunStore::open(db);
            const auto runs = store.list_runs();
            if (runs.empty()) {
                continue;
            }
            bool seen[2] = {false, false};
            for (const MetricRow& row : store.metrics(runs.front().id)) {
                seen[row.rank == 1] |= row.phase == "step";
            }
            if (seen[0] && seen[1]) {
                return runs.front().id;
            }
        } catch (const std::exception&) {
        }
    }
    return 0;
}

// The worker whose environment says RANK=`rank` (entries are separated by NUL bytes); 0 if none.
pid_t worker_of_rank(const std::vector<pid_t>& workers, int rank) {
    const std::string wanted = '\0' + ("RANK=" + std::to_string(rank)) + '\0';
    for (const pid_t pid : workers) {
        std::ifstream environ("/proc/" + std::to_string(pid) + "/environ");
        const std::string entries =
            '\0' + std::string((std::istreambuf_iterator<char>(environ)), {});
        if (entries.find(wanted) != std::string::npos) {
            return pid;
        }
    }
    return 0;
}

// A long run of 2 workers, once both have written step rows (run 0 if they never did).
struct LiveRun {
    test::TempDir dir;
    std::string db = dir.file("runs.sqlite");
    Launched launcher = launch_long_run(dir, db);
    std::int64_t run = wait_for_both_ranks(db);
    std::vector<pid_t> workers = children_of(launcher.pid);
};

TEST(DataParallel, AKilledWorkerEndsTheRunOnEveryRankAndLeavesNoProcess) {
    const LiveRun live;
    const auto& [dir, db, launcher, run, workers] = live;
    ASSERT_NE(run, 0) << test::read_text(launcher.err_file);
    ASSERT_EQ(workers.size(), 2u);
    const pid_t rank1 = worker_of_rank(workers, 1);
    ASSERT_NE(rank1, 0);
    kill(rank1, SIGKILL);

    // Rank 0 notices at its next collective, well within distributed.timeout_s.
    const int status = test::wait_exit(launcher.pid, std::chrono::seconds(60));
    ASSERT_NE(status, -1) << "the launcher did not end";
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 1);
    for (const pid_t pid : workers) {
        EXPECT_FALSE(alive(pid)) << "worker " << pid << " outlived the run";
    }
    const std::string err = test::read_text(launcher.err_file);
    EXPECT_NE(err.find("rank 1 (pid " + std::to_string(rank1) + ") was killed by signal 9"),
              std::string::npos)
        << err;

    const RunStore store = RunStore::open(db);
    const std::optional<RunRecord> record = store.find_run(run);
    ASSERT_TRUE(record);
    EXPECT_EQ(record->outcome.status, RunStatus::Failed);
    EXPECT_NE(record->outcome.error.find("rank 0 of 2"), std::string::npos)
        << record->outcome.error;
    // The peer's socket closed at once: said as such, not as a timeout that never ran out.
    EXPECT_NE(record->outcome.error.find(" failed after "), std::string::npos)
        << record->outcome.error;
    // Each rank's own ending: rank 0 failed; rank 1 was killed before it could say anything.
    ASSERT_EQ(record->ranks.size(), 2u);
    EXPECT_EQ(record->ranks[0].status, RunStatus::Failed);
    EXPECT_FALSE(record->ranks[1].status);
}

// Rank 0 writes the run's summary; killed, it cannot. The launcher saw it die and records the
// run `failed` with that cause and what its rows say it did (it was left `interrupted` with 0
// steps and a 0 B peak), and nothing shows the breakdown it never recorded as zeros.
TEST(DataParallel, AKilledRankZeroLeavesTheRunFailedWithWhatItDid) {
    const LiveRun live;
    const auto& [dir, db, launcher, run, workers] = live;
    ASSERT_NE(run, 0) << test::read_text(launcher.err_file);
    const pid_t rank0 = worker_of_rank(workers, 0);
    ASSERT_NE(rank0, 0);
    kill(rank0, SIGKILL);
    const int status = test::wait_exit(launcher.pid, std::chrono::seconds(60));
    ASSERT_NE(status, -1) << "the launcher did not end";
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 1);
    const std::string err = test::read_text(launcher.err_file);
    EXPECT_NE(err.find("run " + std::to_string(run) + " recorded as failed after "),
              std::string::npos)
        << err;

    const RunStore store = RunStore::open(db);
    const std::optional<RunRecord> record = store.find_run(run);
    ASSERT_TRUE(record);
    EXPECT_EQ(record->outcome.status, RunStatus::Failed);
    EXPECT_NE(record->outcome.error.find("rank 0 (pid " + std::to_string(rank0) +
                                         ") was killed by signal 9"),
              std::string::npos)
        << record->outcome.error;
    std::int64_t last_step = 0;
    std::int64_t highest_peak = 0;
    for (const MetricRow& row : store.metrics(run)) {
        if (row.rank == 0 && row.phase == "step") {
            last_step = std::max(last_step, row.step);
        }
        highest_peak = std::max(highest_peak, row.peak_bytes.value_or(0));
    }
    EXPECT_GT(last_step, 0);
    EXPECT_EQ(record->outcome.steps, last_step);
    EXPECT_EQ(record->outcome.peak_bytes, highest_peak);
    EXPECT_TRUE(record->outcome.final_train_loss);
    EXPECT_FALSE(record->outcome.has_breakdown());
    EXPECT_EQ(test::show_run_json(db, run)["breakdown_recorded"], false);

    // Shown as the peak alone, never as a breakdown of zeros or a -100% disagreement.
    const test::CliResult shown = test::run_cli({"runs", "show", std::to_string(run), "--db", db});
    EXPECT_NE(shown.out.find("no breakdown: the run ended before recording it"), std::string::npos)
        << shown.out;
    EXPECT_EQ(shown.out.find("-100%"), std::string::npos) << shown.out;
    EXPECT_NE(shown.out.find("(lost: no ending reached this database)"), std::string::npos)
        << shown.out;
    const test::CliResult other =
        test::run_cli({"run", "--db", db, "--set", "train.max_steps=2", "--set", "device=cpu"});
    ASSERT_EQ(other.exit_code, 0) << other.err;
    const test::CliResult diff = test::run_cli(
        {"runs", "diff", std::to_string(run), std::to_string(run + 1), "--db", db, "--json"});
    const nlohmann::json document = nlohmann::json::parse(diff.out);
    EXPECT_TRUE(document["by_category"].empty());
    ASSERT_EQ(document["notes"].size(), 1u);
    EXPECT_NE(document["notes"][0].get<std::string>().find("A (failed) has no breakdown"),
              std::string::npos);
}

TEST(DataParallel, AKilledLauncherTakesItsWorkersWithIt) {
    const LiveRun live;
    const auto& [dir, db, launcher, run, workers] = live;
    ASSERT_NE(run, 0);
    ASSERT_EQ(workers.size(), 2u);
    kill(launcher.pid, SIGKILL);
    waitpid(launcher.pid, nullptr, 0);
    for (int attempt = 0; attempt < 100 && (alive(workers[0]) || alive(workers[1])); ++attempt) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    for (const pid_t pid : workers) {
        EXPECT_FALSE(alive(pid)) << "worker " << pid << " outlived its launcher";
    }
    // The next open finds the run's writer gone.
    const RunStore store = RunStore::open(db);
    EXPECT_EQ(store.find_run(run)->outcome.status, RunStatus::Interrupted);
}

// Ctrl+C in a terminal: SIGINT to the launcher's whole process group. Each worker is asked
// once to stop; they agree at a step and the run ends cancelled, saved, with exit code 130.
TEST(DataParallel, CtrlCStopsEveryRankAtTheSameStepAndSavesTheRun) {
    const LiveRun live;
    const auto& [dir, db, launcher, run, workers] = live;
    ASSERT_NE(run, 0);
    ASSERT_EQ(workers.size(), 2u);
    kill(-launcher.pid, SIGINT);  // the launcher's process group, as a terminal does
    const int status = test::wait_exit(launcher.pid, std::chrono::seconds(60));
    ASSERT_NE(status, -1) << "the launcher did not end";
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 130) << test::read_text(launcher.err_file);
    const RunStore store = RunStore::open(db);
    const std::optional<RunRecord> record = store.find_run(run);
    EXPECT_EQ(record->outcome.status, RunStatus::Cancelled) << record->outcome.error;
    std::map<int, std::int64_t> last_step;
    for (const MetricRow& row : store.metrics(run)) {
        if (row.phase == "step") {
            last_step[row.rank] = std::max(last_step[row.rank], row.step);
        }
    }
    EXPECT_EQ(last_step[0], last_step[1]) << "both ranks stopped after the same step";
}

}  // namespace
}  // namespace oomlab
