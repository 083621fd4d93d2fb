// Ranks started by hand, as on several hosts: each with its own database and settings. A rank
// joins rank 0's run by its identity, never writes into a run of its own database that only
// shares the number, and ranks with different settings refuse together.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "oomlab/launch/rendezvous.h"
#include "oomlab/store/run_store.h"
#include "test_support.h"

namespace oomlab {
namespace {

// Two ranks started by hand (as on two hosts), each with its own --db and settings.
std::pair<test::CliResult, test::CliResult> two_ranks(const std::string& db0,
                                                      const std::vector<std::string>& settings0,
                                                      const std::string& db1,
                                                      const std::vector<std::string>& settings1) {
    const std::string port = std::to_string(free_loopback_port());
    const auto rank = [&](int number, const std::string& db,
                          const std::vector<std::string>& settings) {
        std::vector<std::string> arguments{"run", "--db", db, "--set", "distributed.timeout_s=20"};
        for (const std::string& setting : settings) {
            arguments.push_back("--set");
            arguments.push_back(setting);
        }
        return test::run_cli(arguments, {"WORLD_SIZE=2", "RANK=" + std::to_string(number),
                                         "LOCAL_RANK=" + std::to_string(number),
                                         "MASTER_ADDR=127.0.0.1", "MASTER_PORT=" + port});
    };
    auto first = std::async(std::launch::async, rank, 0, db0, settings0);
    test::CliResult second = rank(1, db1, settings1);
    return {first.get(), std::move(second)};
}

// Each host has its own default database: rank 1's holds an unrelated run with rank 0's run
// number. Rank 1 never writes into it; the run is whole in rank 0's database, rank 1's ending
// and memory included.
TEST(DataParallel, ARankWithAnotherDatabaseNeverWritesIntoARunOfIt) {
    test::TempDir dir;
    const std::string main_db = dir.file("main.sqlite");
    const std::string other_db = dir.file("other.sqlite");
    ASSERT_EQ(test::run_cli({"run", "--db", other_db, "--set", "train.max_steps=2"}).exit_code, 0);
    const RunStore before = RunStore::open(other_db);
    const std::size_t rows_before = before.metrics(1).size();
    const std::size_t events_before = before.events(1).size();

    const auto [rank0, rank1] =
        two_ranks(main_db, {"train.max_steps=4"}, other_db, {"train.max_steps=4"});
    ASSERT_EQ(rank0.exit_code, 0) << rank0.err;
    ASSERT_EQ(rank1.exit_code, 0) << rank1.err;

    const RunStore other = RunStore::open(other_db);
    ASSERT_EQ(other.list_runs().size(), 1u);
    EXPECT_EQ(other.metrics(1).size(), rows_before);
    EXPECT_EQ(other.events(1).size(), events_before);
    EXPECT_EQ(other.find_run(1)->outcome.steps, 2);
    EXPECT_EQ(other.find_run(1)->ranks.size(), 0u) << "a one-process run has no ranks";

    const nlohmann::json run = test::show_run_json(main_db, 1);
    EXPECT_EQ(run["status"], "completed");
    ASSERT_EQ(run["ranks"].size(), 2u);
    const nlohmann::json& second = run["ranks"][1];
    EXPECT_EQ(second["rank"], 1);
    EXPECT_EQ(second["status"], "completed");
    EXPECT_EQ(second["steps"], 4);
    EXPECT_GT(second["peak_bytes"].get<std::int64_t>(), 1 << 20);
    // Rank 1's memory, as rank 0's (the same shapes unsharded).
    EXPECT_EQ(second["parameters"], run["ranks"][0]["parameters"]);
    EXPECT_EQ(second["optimizer_state"], run["ranks"][0]["optimizer_state"]);
    const RunStore main = RunStore::open(main_db);
    bool said = false;
    for (const EventRow& event : main.events(1)) {
        said |= event.message.find("rank 1 recorded into another database") != std::string::npos;
    }
    EXPECT_TRUE(said);
}

// Where rank 1's database has no run of that number the run still completes (it used to end
// `failed` on a foreign key), and nothing is created there.
TEST(DataParallel, ARankWhoseDatabaseLacksTheRunCompletesIt) {
    test::TempDir dir;
    const auto [rank0, rank1] = two_ranks(dir.file("main.sqlite"), {"train.max_steps=3"},
                                          dir.file("other.sqlite"), {"train.max_steps=3"});
    ASSERT_EQ(rank0.exit_code, 0) << rank0.err;
    ASSERT_EQ(rank1.exit_code, 0) << rank1.err;
    EXPECT_EQ(test::show_run_json(dir.file("main.sqlite"), 1)["status"], "completed");
    EXPECT_TRUE(RunStore::open(dir.file("other.sqlite")).list_runs().empty());
}

// Ranks with different settings agree to refuse at once, naming every key that differs (one
// aborted in gloo, another waited the whole timeout blaming a dead peer).
TEST(DataParallel, RanksWithDifferentSettingsRefuseNamingTheKeys) {
    test::TempDir dir;
    const std::string db = dir.file("runs.sqlite");
    const auto [rank0, rank1] =
        two_ranks(db, {"train.max_steps=3"}, db, {"train.max_steps=5", "model.kind=bilstm"});
    const std::string expected =
        "error: the ranks cannot train one run: rank 1: its settings differ from rank 0's: "
        "model.kind (rank 0: bag, here: bilstm), train.max_steps (rank 0: 3, here: 5). Start "
        "every rank with the same config and --set options\n";
    EXPECT_EQ(rank0.exit_code, 2);
    EXPECT_EQ(rank0.err, expected);
    EXPECT_EQ(rank1.exit_code, 2);
    EXPECT_EQ(rank1.err, expected);
    const nlohmann::json run = test::show_run_json(db, 1);
    EXPECT_EQ(run["status"], "failed");
    EXPECT_NE(run["error"].get<std::string>().find("model.kind"), std::string::npos);
    EXPECT_EQ(run["steps"], 0);
}

// A rank that refuses its settings before joining (a bad value, a missing file) tells the
// others through the rendezvous's store: they stop at once with its reason, where they waited
// the whole timeout (20 s here) and blamed a dead peer. Whichever rank refuses, rank 0 serving
// the store or a client of it.
TEST(DataParallel, ARankRefusingItsSettingsBeforeJoiningStopsTheOthersWithItsReason) {
    test::TempDir dir;
    const std::string db = dir.file("runs.sqlite");
    using Clock = std::chrono::steady_clock;
    for (const int refusing : {1, 0}) {
        const std::vector<std::string> good{"train.max_steps=3"};
        const std::vector<std::string> bad =
            refusing == 1 ? std::vector<std::string>{"train.batch_size=0"}
                          : std::vector<std::string>{"dataset.path=" + dir.file("missing")};
        const Clock::time_point started = Clock::now();
        const auto [rank0, rank1] =
            refusing == 1 ? two_ranks(db, good, db, bad) : two_ranks(db, bad, db, good);
        const auto waited = Clock::now() - started;
        const test::CliResult& refused = refusing == 1 ? rank1 : rank0;
        const test::CliResult& told = refusing == 1 ? rank0 : rank1;
        EXPECT_EQ(refused.exit_code, 2) << refused.err;
        EXPECT_EQ(told.exit_code, 2) << told.err;
        const std::string key = refusing == 1 ? "train.batch_size" : "dataset.path";
        EXPECT_NE(told.err.find("rank " + std::to_string(refusing) +
                                " refused its settings, so the run cannot start: "),
                  std::string::npos)
            << told.err;
        EXPECT_NE(told.err.find(key), std::string::npos) << told.err;
        EXPECT_EQ(told.err.find("did not complete within"), std::string::npos) << told.err;
        // Not the timeout: the one bound that says the others did not wait for it.
        EXPECT_LT(waited, std::chrono::seconds(20));
    }
    EXPECT_TRUE(RunStore::open(db).list_runs().empty());  // nothing was recorded
}

// Two tasks of one srun step on this machine, with only the variables srun sets: they meet on
// the step's first node, at the port the job and step give, and train one run.
TEST(DataParallel, TheTasksOfASlurmStepTrainOneRunWithoutMasterVariables) {
    // A job and step whose port is free now.
    int job = -1;
    int step = 0;
    for (int attempt = 0; attempt < 50 && job < 0; ++attempt) {
        const int port = free_loopback_port();
        if (port >= kFirstSlurmPort && port < kFirstSlurmPort + kSlurmPorts) {
            job = (port - kFirstSlurmPort) / 16;
            step = (port - kFirstSlurmPort) % 16;
        }
    }
    if (job < 0) {
        GTEST_SKIP() << "no free port in the range srun's tasks meet on";
    }
    test::TempDir dir;
    const std::string db = dir.file("runs.sqlite");
    const auto task = [&](int number) {
        return test::run_cli(
            {"run", "--db", db, "--json", "--set", "train.max_steps=4", "--set",
             "distributed.timeout_s=20"},
            {"SLURM_JOB_ID=" + std::to_string(job), "SLURM_STEP_ID=" + std::to_string(step),
             "SLURM_NTASKS=2", "SLURM_PROCID=" + std::to_string(number),
             "SLURM_LOCALID=" + std::to_string(number), "SLURM_NODEID=0",
             "SLURM_STEP_NODELIST=localhost", "SLURM_JOB_NODELIST=localhost"});
    };
    auto first = std::async(std::launch::async, task, 0);
    const test::CliResult second = task(1);
    const test::CliResult rank0 = first.get();
    ASSERT_EQ(rank0.exit_code, 0) << rank0.err;
    ASSERT_EQ(second.exit_code, 0) << second.err;
    const nlohmann::json run = test::show_run_json(db, 1);
    EXPECT_EQ(run.at("status"), "completed");
    EXPECT_EQ(run.at("world_size"), 2);
    ASSERT_EQ(run.at("ranks").size(), 2u) << run.dump();
    EXPECT_EQ(run.at("ranks")[1].at("steps"), 4);
}

}  // namespace
}  // namespace oomlab
