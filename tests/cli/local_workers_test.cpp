// The launcher of local worker processes: what the workers say on standard error reaches the
// caller once, a config every worker refuses comes back as the refusal itself, and the run
// followed is the one rank 0 created.
#include "oomlab/launch/local_workers.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "cli_runner.h"
#include "oomlab/common/errors.h"
#include "oomlab/launch/exit_code.h"
#include "oomlab/launch/rendezvous.h"
#include "oomlab/launch/worker_jobs.h"
#include "oomlab/launch/worker_report.h"
#include "oomlab/session/run_session.h"
#include "oomlab/store/run_store.h"
#include "test_support.h"

namespace oomlab {
namespace {

// As oomlab-cli names itself for its lessons' workers: the one built beside the tests.
void use_cli_for_workers() {
    set_worker_program({test::cli_program(), {"worker"}});
}

TEST(LocalWorkers, EachWorkersErrorsAreKeptAndRepeatedLinesShownOnce) {
    LocalWorkers workers;
    workers.program = "/bin/sh";
    workers.arguments = {"-c",
                         "echo \"error: same for all\" >&2; echo \"rank $RANK of $WORLD_SIZE\" "
                         ">&2; exit $((RANK + 2))"};
    workers.count = 3;
    const std::atomic<bool> stop{false};
    const std::vector<WorkerExit> exits = run_local_workers(workers, stop);
    ASSERT_EQ(exits.size(), 3u);
    for (int rank = 0; rank < 3; ++rank) {
        EXPECT_EQ(exits[rank].exit_code, rank + 2);
        EXPECT_EQ(exits[rank].errors,
                  "error: same for all\nrank " + std::to_string(rank) + " of 3\n");
    }
    EXPECT_EQ(distinct_error_lines(exits),
              (std::vector<std::string>{"error: same for all", "rank 0 of 3", "rank 1 of 3",
                                        "rank 2 of 3"}));
    // The same error of several ranks is one line naming them (an OOM at --nproc 3 was said
    // once per rank).
    std::vector<WorkerExit> oom(4);
    oom[1].errors = "error: rank 1: out of memory at step 1\n";
    oom[2].errors = "error: rank 2: out of memory at step 1\nerror: rank 2: also this\n";
    oom[3].errors = "error: rank 3: out of memory at step 1\n";
    EXPECT_EQ(distinct_error_lines(oom),
              (std::vector<std::string>{"error: ranks 1, 2 and 3: out of memory at step 1",
                                        "error: rank 2: also this"}));
}

// Between the launcher's check and rank 0's bind, no outgoing connection of this machine can
// take the port: the kernel hands those only ports of ip_local_port_range.
TEST(LocalWorkers, TheRendezvousPortIsNoneTheKernelHandsOut) {
    std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
    int low = 0;
    int high = 0;
    ASSERT_TRUE(range >> low >> high);
    if (low <= 10000) {
        GTEST_SKIP() << "this machine hands out ports from " << low;
    }
    std::set<int> ports;
    for (int i = 0; i < 20; ++i) {
        const int port = free_loopback_port();
        EXPECT_GE(port, 10000);
        EXPECT_LT(port, low);
        ports.insert(port);
    }
    EXPECT_GT(ports.size(), 10u) << "chosen at random, so two launchers rarely try the same";
}

TEST(LocalWorkers, AConfigTheWorkersRefuseIsTheCallersBadInput) {
    use_cli_for_workers();
    test::TempDir dir;
    ExperimentConfig config;
    config.dataset.path = dir.file("missing.csv");
    const std::atomic<bool> cancel{false};
    try {
        run_with_local_workers(config, "refused", dir.file("runs.sqlite"), 2, cancel);
        FAIL() << "a run without its dataset was recorded";
    } catch (const BadInput& error) {
        // The workers' own message, once, without the ranks' exit codes around it.
        EXPECT_EQ(std::string(error.what()),
                  dir.file("missing.csv") + ": does not exist (dataset.path)");
        // With the key, so that a form can mark it.
        EXPECT_EQ(error.keys(), std::vector<std::string>{"dataset.path"});
    }
    EXPECT_TRUE(RunStore::open(dir.file("runs.sqlite")).list_runs().empty());
}

TEST(LocalWorkers, ARefusalOnlyTheWorkersCanMakeCarriesItsKey) {
    use_cli_for_workers();
    test::TempDir dir;
    ExperimentConfig config;
    config.train.batch_size = 100000;  // more than the default data holds for two processes
    const std::atomic<bool> cancel{false};
    try {
        run_with_local_workers(config, "refused", dir.file("runs.sqlite"), 2, cancel);
        FAIL() << "a batch larger than the data was trained by two processes";
    } catch (const BadInput& error) {
        EXPECT_NE(std::string(error.what()).find("processes"), std::string::npos) << error.what();
        EXPECT_EQ(error.keys(), std::vector<std::string>{"train.batch_size"});
    }
}

// The engine knows no program to start workers with: without a front end's, a job says so.
TEST(LocalWorkers, AJobWithoutAWorkerProgramSaysSo) {
    set_worker_program({});
    test::TempDir dir;
    const std::atomic<bool> cancel{false};
    try {
        run_with_local_workers(ExperimentConfig{}, "x", dir.file("runs.sqlite"), 2, cancel);
        FAIL() << "workers were started without a program";
    } catch (const BadInput&) {
        FAIL() << "not the user's input";
    } catch (const Error& error) {
        EXPECT_EQ(std::string(error.what()),
                  "training with 2 processes needs a program to start the workers with, and "
                  "this one names none");
    }
    set_worker_program({dir.file("missing-cli"), {"worker"}});
    try {
        run_with_local_workers(ExperimentConfig{}, "x", dir.file("runs.sqlite"), 2, cancel);
        FAIL() << "workers were started with a missing program";
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find(dir.file("missing-cli") + " to start the workers"),
                  std::string::npos)
            << error.what();
    }
    use_cli_for_workers();
}

// A killed workbench leaves its job folder behind; the next job removes it, and only the
// folders of launchers that no longer run.
TEST(LocalWorkers, TheFolderOfAKilledLauncherIsRemovedByTheNextJob) {
    use_cli_for_workers();
    test::TempDir dir;
    const pid_t gone = fork();
    ASSERT_GE(gone, 0);
    if (gone == 0) {
        _exit(0);
    }
    waitpid(gone, nullptr, 0);
    const std::string orphan = dir.file("oomlab-workers-" + std::to_string(gone) + "-a1b2c3");
    const std::string alive = dir.file("oomlab-workers-" + std::to_string(getpid()) + "-d4e5f6");
    const std::string other = dir.file("oomlab-workers-notes");
    for (const std::string& folder : {orphan, alive, other}) {
        std::filesystem::create_directories(folder + "/inside");
    }
    const char* before = std::getenv("TMPDIR");
    const std::string saved = before ? before : "";
    setenv("TMPDIR", dir.path().c_str(), 1);
    ExperimentConfig config;
    config.dataset.path = dir.file("missing.csv");  // refused at once: the job is what counts
    const std::atomic<bool> cancel{false};
    EXPECT_THROW(run_with_local_workers(config, "x", dir.file("runs.sqlite"), 2, cancel), BadInput);
    if (before) {
        setenv("TMPDIR", saved.c_str(), 1);
    } else {
        unsetenv("TMPDIR");
    }
    EXPECT_FALSE(std::filesystem::exists(orphan));
    EXPECT_TRUE(std::filesystem::exists(alive));
    EXPECT_TRUE(std::filesystem::exists(other));
    std::size_t left = 0;  // the job's own folder went with it
    for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
        left += entry.is_directory() ? 1 : 0;
    }
    EXPECT_EQ(left, 2u);
}

// Records a run of its own into the database as soon as the workers' run exists, as another
// window or a sweep writing to the same file would.
class AnotherWriter final : public RunListener {
public:
    explicit AnotherWriter(RunStore& store) : m_store(store) {}

    void on_run_created(std::int64_t run_id, const ExperimentInfo& /*info*/) override {
        followed = run_id;
        other = m_store.create_run({"someone else's run", "{}", "cpu", "test", "test", 1});
        RunOutcome outcome;
        outcome.status = RunStatus::Completed;
        m_store.finish_run(other, outcome);
    }
    void on_metrics(const std::vector<MetricRow>& rows) override { rows_seen += rows.size(); }

    std::int64_t followed = 0;
    std::int64_t other = 0;
    std::size_t rows_seen = 0;

private:
    RunStore& m_store;
};

TEST(LocalWorkers, TheRunFollowedIsTheWorkersEvenWhenANewerOneIsWritten) {
    use_cli_for_workers();
    test::TempDir dir;
    RunStore store = RunStore::open(dir.file("runs.sqlite"));
    AnotherWriter listener(store);
    ExperimentConfig config;
    config.train.max_steps = 4;
    const std::atomic<bool> cancel{false};
    const RunResult result = run_with_workers_and_record(config, "", store, listener, cancel, 2);
    ASSERT_NE(listener.other, 0);
    EXPECT_GT(listener.other, result.run_id);  // the newest run is not the workers'
    EXPECT_EQ(listener.followed, result.run_id);
    const std::optional<RunRecord> run = store.find_run(result.run_id);
    ASSERT_TRUE(run);
    EXPECT_EQ(run->world_size, 2);
    EXPECT_EQ(result.outcome.status, RunStatus::Completed);
    EXPECT_EQ(result.outcome.steps, 4);
    EXPECT_EQ(listener.rows_seen, store.metrics(result.run_id).size());
}

// The engine's worker entry refuses a folder that is not a job as any bad input: exit code 2,
// the file named, and the refusal reported (with its file) to a launcher that asked for it.
TEST(WorkerEntry, AFolderWithoutAJobIsRefusedNamingItsFile) {
    test::TempDir dir;
    {
        std::ofstream(dir.file("task.json")) << "{\"task\": \"train everything\", \"db\": \"\", "
                                                "\"name\": \"\"}";
    }
    const test::CliResult result = test::run_cli(
        {"worker", dir.path()}, {std::string(kWorkerReportVariable) + "=" + dir.path()});
    EXPECT_EQ(result.exit_code, kExitBadInput) << result.err;
    EXPECT_EQ(result.err, "error: " + dir.file("task.json") +
                              ": \"task\": \"train everything\" is no task of a worker\n");
    const std::vector<BadInput> refusals = WorkerReports(dir.path()).bad_inputs(1);
    ASSERT_EQ(refusals.size(), 1u);
    EXPECT_NE(std::string(refusals[0].what()).find("task.json"), std::string::npos);

    const test::CliResult empty = test::run_cli({"worker", dir.file("none")});
    EXPECT_EQ(empty.exit_code, kExitBadInput);
    EXPECT_NE(empty.err.find(dir.file("none/task.json")), std::string::npos) << empty.err;
}

// Started by the engine, not by people: the subcommand is not offered in --help.
TEST(WorkerEntry, TheWorkerCommandIsNotOfferedToPeople) {
    const test::CliResult help = test::run_cli({"--help"});
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_NE(help.out.find("find-batch-size"), std::string::npos);
    EXPECT_EQ(help.out.find("worker"), std::string::npos) << help.out;
}

}  // namespace
}  // namespace oomlab
