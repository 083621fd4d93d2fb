// find-batch-size and sweep through the real binary.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "cli_runner.h"
#include "oomlab/store/run_store.h"
#include "test_support.h"

namespace oomlab {
namespace {

using nlohmann::json;
using test::run_cli;

const std::vector<std::string> kCapped = {
    "--set", "model.kind=transformer", "--set", "train.max_len=32",
    "--set", "memory.cap_mb=100",      "--set", "train.optimizer=sgd"};

std::vector<std::string> with(std::vector<std::string> head, const std::vector<std::string>& tail) {
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
}

// The bag model with Adam: memory is mostly its table and state, so the few batches the loader
// holds ahead decide whether the answer's run fits; a trial must hold them as a run does.
const std::vector<std::string> kBagCapped = {"--set", "memory.cap_mb=16", "--set",
                                             "train.optimizer=adam"};

// Each model a test of its own, so that ctest runs them side by side: each trains two epochs.
class FoundBatch : public ::testing::TestWithParam<std::vector<std::string>> {};

TEST_P(FoundBatch, CompletesAnEpochAndAQuarterMoreDoesNot) {
    const std::vector<std::string>& settings = GetParam();
    test::TempDir dir;
    const auto search = run_cli(with({"find-batch-size", "--json"}, settings));
    ASSERT_EQ(search.exit_code, 0) << search.err;
    const json answer = json::parse(search.lines().back());
    const int batch = answer["batch_size"];
    ASSERT_GT(batch, 1);
    EXPECT_LE(answer["trials"].get<int>(), 8);

    const auto fits =
        run_cli(with({"run", "--db", dir.file("runs.sqlite"), "--set", "train.epochs=1", "--set",
                      "train.batch_size=" + std::to_string(batch)},
                     settings));
    EXPECT_EQ(fits.exit_code, 0) << settings[1] << ", batch " << batch << ": " << fits.err;
    const auto too_big =
        run_cli(with({"run", "--db", dir.file("runs.sqlite"), "--set", "train.epochs=1", "--set",
                      "train.batch_size=" + std::to_string(batch * 5 / 4)},
                     settings));
    EXPECT_EQ(too_big.exit_code, 3) << settings[1] << ": " << too_big.err;
}

INSTANTIATE_TEST_SUITE_P(FindBatchSize, FoundBatch, ::testing::Values(kCapped, kBagCapped),
                         [](const ::testing::TestParamInfo<std::vector<std::string>>& model) {
                             return model.param == kCapped ? std::string("TransformerUnder100MiB")
                                                           : std::string("BagWithAdamUnder16MiB");
                         });

// With several processes every trial trains every rank, with its shards and buckets: under a
// 12 MiB cap not even a batch of one fits one process of the default model with Adam, while
// each of two ZeRO-2 ranks fits hundreds, and a two-process run of that batch completes.
TEST(FindBatchSize, WithSeveralProcessesEachTrialTrainsEveryRank) {
    const std::vector<std::string> sharded{"--set", "memory.cap_mb=12",
                                           "--set", "train.optimizer=adam",
                                           "--set", "distributed.shard=gradients",
                                           "--set", "distributed.bucket_mb=1"};
    const auto alone = run_cli(with({"find-batch-size", "--json"}, sharded));
    EXPECT_EQ(alone.exit_code, 3) << alone.err;
    EXPECT_EQ(json::parse(alone.lines().back())["batch_size"], 0);

    const auto ranks = run_cli(with({"find-batch-size", "--json", "--nproc", "2"}, sharded));
    ASSERT_EQ(ranks.exit_code, 0) << ranks.err;
    const json answer = json::parse(ranks.lines().back());
    EXPECT_EQ(answer["processes"], 2);
    const int batch = answer["batch_size"];
    EXPECT_GT(batch, 100);
    EXPECT_EQ(ranks.lines().size(), answer["trials"].get<std::size_t>() + 1)
        << "rank 0 alone prints the trials";

    test::TempDir dir;
    const auto fits =
        run_cli(with({"run", "--nproc", "2", "--db", dir.file("runs.sqlite"), "--set",
                      "train.max_steps=8", "--set", "train.batch_size=" + std::to_string(batch)},
                     sharded));
    EXPECT_EQ(fits.exit_code, 0) << fits.err;
}

TEST(FindBatchSize, NeedsACapAndARunWhoseMemoryDoesNotGrowWithItsLength) {
    const auto result = run_cli({"find-batch-size"});
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("memory.cap_mb"), std::string::npos) << result.err;
    // Every step's graph kept: two steps' trial would answer for no real run.
    const auto growing = run_cli(
        {"find-batch-size", "--set", "memory.cap_mb=40", "--set", "debug.keep_loss_graph=true"});
    EXPECT_EQ(growing.exit_code, 2);
    EXPECT_EQ(growing.err.rfind("error: debug.keep_loss_graph=true keeps every step's graph", 0),
              0u)
        << growing.err;
}

TEST(Sweep, RecordsOneRunPerPointWithOomPointsAsSuch) {
    test::TempDir dir;
    const std::string db = dir.file("runs.sqlite");
    const auto result =
        run_cli(with({"sweep", "--db", db, "--json", "--grid", "train.batch_size=16,2000", "--grid",
                      "train.optimizer=sgd,adam", "--set", "train.max_steps=3"},
                     kCapped));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    ASSERT_EQ(result.lines().size(), 4u);
    std::map<std::string, std::string> status_by_name;
    for (const auto& line : result.lines()) {
        const json run = json::parse(line);
        status_by_name[run["name"]] = run["status"];
    }
    EXPECT_EQ(status_by_name["sweep train.batch_size=16 train.optimizer=sgd"], "completed");
    EXPECT_EQ(status_by_name["sweep train.batch_size=16 train.optimizer=adam"], "completed");
    EXPECT_EQ(status_by_name["sweep train.batch_size=2000 train.optimizer=sgd"], "oom");
    EXPECT_EQ(RunStore::open(db).list_runs().size(), 4u);
}

TEST(Sweep, AnInvalidPointCreatesNoRun) {
    test::TempDir dir;
    const std::string db = dir.file("runs.sqlite");
    const auto result = run_cli({"sweep", "--db", db, "--grid", "train.padding=fixed,ragged",
                                 "--set", "train.max_steps=2"});
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("train.padding"), std::string::npos) << result.err;
    EXPECT_EQ(RunStore::open(db).list_runs().size(), 0u);
}

TEST(Sweep, EveryPointWritesItsOwnMemorySnapshot) {
    test::TempDir dir;
    const std::string db = dir.file("runs.sqlite");
    const auto result =
        run_cli({"sweep", "--db", db, "--json", "--grid", "train.batch_size=8,16", "--set",
                 "train.max_steps=2", "--set", "debug.memory_snapshot=" + dir.file("snap.pickle")});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    std::set<std::string> written;
    for (const auto& line : result.lines()) {
        const std::string id = std::to_string(json::parse(line)["run_id"].get<std::int64_t>());
        EXPECT_TRUE(std::filesystem::exists(dir.file("snap.run" + id + ".pickle"))) << id;
        written.insert(id);
    }
    EXPECT_EQ(written.size(), 2u);
    EXPECT_FALSE(std::filesystem::exists(dir.file("snap.pickle")));
}

TEST(FindBatchSize, TrialsWriteNoMemorySnapshot) {
    test::TempDir dir;
    const std::string snapshot = dir.file("snap.pickle");
    const auto search = run_cli(
        with({"find-batch-size", "--json", "--set", "debug.memory_snapshot=" + snapshot}, kCapped));
    ASSERT_EQ(search.exit_code, 0) << search.err;
    EXPECT_FALSE(std::filesystem::exists(snapshot)) << "a trial is not a run";
}

}  // namespace
}  // namespace oomlab
