// Data-parallel runs through the real binary: `run --nproc 2` on 127.0.0.1 with Gloo, one
// run row, every rank's rows, identical parameters, sharded optimizer state, out of memory on
// every rank, and what a group refuses. Processes killed and stopped: data_parallel_process_test.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "data_parallel_runs.h"
#include "oomlab/launch/rendezvous.h"
#include "oomlab/store/run_store.h"
#include "test_support.h"

namespace oomlab {
namespace {

TEST(DataParallel, TwoRanksTrainOneRunWithTheSameParameters) {
    test::TempDir dir;
    const std::string db = dir.file("runs.sqlite");
    const test::CliResult ran =
        test::run_cli(short_run(db, {"debug.memory_snapshot=" + dir.file("snap.pickle")}));
    ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;

    const RunStore store = RunStore::open(db);
    const std::vector<RunRecord> runs = store.list_runs();
    ASSERT_EQ(runs.size(), 1u) << "one run row for both ranks";
    // Each rank writes its own memory snapshot; neither replaces the other's.
    for (const char* name : {"snap.rank0.pickle", "snap.rank1.pickle"}) {
        EXPECT_GT(std::filesystem::file_size(dir.file(name)), 1000u) << name;
    }
    EXPECT_FALSE(std::filesystem::exists(dir.file("snap.pickle")));
    EXPECT_EQ(runs.front().world_size, 2);
    EXPECT_EQ(runs.front().outcome.status, RunStatus::Completed);
    EXPECT_EQ(runs.front().outcome.steps, kShortRunSteps);

    std::map<int, int> steps_by_rank;
    for (const MetricRow& row : store.metrics(runs.front().id)) {
        steps_by_rank[row.rank] += row.phase == "step";
    }
    EXPECT_EQ(steps_by_rank, (std::map<int, int>{{0, kShortRunSteps}, {1, kShortRunSteps}}));

    // Each rank hashes its parameters' bytes at the end; both notes must carry one hash.
    const auto hashes = parameter_hashes(store, runs.front().id);
    ASSERT_EQ(hashes.size(), 2u) << "both ranks report their parameters";
    EXPECT_EQ(hashes.at("rank 0"), hashes.at("rank 1"));

    const nlohmann::json summary = test::show_run_json(db, runs.front().id);
    EXPECT_EQ(summary["world_size"], 2);
    ASSERT_EQ(summary["ranks"].size(), 2u);
    for (const auto& rank : summary["ranks"]) {
        EXPECT_GT(rank["peak_bytes"].get<std::int64_t>(), 0);
        EXPECT_GT(rank["optimizer_state"].get<std::int64_t>(), 0);
    }
}

// Each rank's peak is its run's, as the allocator saw it: an evaluation that keeps its graphs
// (eval.no_grad=false) peaks far above every training step, on every rank.
TEST(DataParallel, EachRanksPeakIsItsRunPeakEvaluationIncluded) {
    test::TempDir dir;
    const std::string db = dir.file("runs.sqlite");
    const test::CliResult ran = test::run_cli(
        short_run(db, {"eval.no_grad=false", "model.kind=transformer", "train.max_len=32"}));
    ASSERT_EQ(ran.exit_code, 0) << ran.err;
    const RunStore store = RunStore::open(db);
    const RunRecord run = *store.find_run(store.list_runs().front().id);  // with its ranks
    std::map<int, std::int64_t> step_peaks;
    for (const MetricRow& row : store.metrics(run.id)) {
        if (row.phase == "step" && row.peak_bytes) {
            step_peaks[row.rank] = std::max(step_peaks[row.rank], *row.peak_bytes);
        }
    }
    ASSERT_EQ(run.ranks.size(), 2u);
    // The run's peak is its highest rank's (it was rank 0's).
    EXPECT_EQ(run.outcome.peak_bytes, std::max(run.ranks[0].peak_bytes, run.ranks[1].peak_bytes));
    for (const RankMemory& rank : run.ranks) {
        EXPECT_EQ(rank.status, RunStatus::Completed) << "rank " << rank.rank;
        EXPECT_EQ(rank.steps, kShortRunSteps) << "rank " << rank.rank;
        EXPECT_GT(rank.peak_bytes, step_peaks.at(rank.rank) * 3 / 2) << "rank " << rank.rank;
    }
    const nlohmann::json summary = test::show_run_json(db, run.id);
    EXPECT_EQ(summary["ranks"][1]["status"], "completed");
    EXPECT_EQ(summary["ranks"][1]["peak_bytes"], run.ranks[1].peak_bytes);
}

// Accumulation, checkpointing and bf16 work per rank in every shard mode, and the ranks end
// with the same parameters. Each case is a test of its own (one after another they took 27 s).
struct ShardCase {
    const char* name;
    std::vector<std::string> settings;
};

class EveryShardMode : public ::testing::TestWithParam<ShardCase> {};

TEST_P(EveryShardMode, KeepsTheRanksIdenticalWithTheOtherTechniques) {
    test::TempDir dir;
    const std::string db = dir.file("runs.sqlite");
    const test::CliResult ran = test::run_cli(short_run(db, GetParam().settings));
    ASSERT_EQ(ran.exit_code, 0) << ran.err;
    const RunStore store = RunStore::open(db);
    const RunRecord run = store.list_runs().front();
    EXPECT_EQ(run.outcome.status, RunStatus::Completed);
    const auto hashes = parameter_hashes(store, run.id);
    ASSERT_EQ(hashes.size(), 2u);
    EXPECT_EQ(hashes.at("rank 0"), hashes.at("rank 1"));
}

INSTANTIATE_TEST_SUITE_P(
    DataParallel, EveryShardMode,
    ::testing::Values(
        ShardCase{"none_transformer_checkpointed",
                  {"distributed.shard=none", "model.kind=transformer",
                   "memory.checkpointing=layers", "train.accumulation=2", "train.max_len=32"}},
        ShardCase{"optimizer_bf16",
                  {"distributed.shard=optimizer", "memory.precision=bf16", "train.accumulation=2",
                   test::kBf16Batch}},
        ShardCase{
            "gradients_transformer_adamw",
            {"distributed.shard=gradients", "model.kind=transformer", "memory.checkpointing=layers",
             "train.accumulation=3", "train.max_len=32", "train.optimizer=adamw"}},
        // Half as wide as the default transformer, for the bf16 products (test::kBf16Batch):
        // 1.2 s a rank instead of 4.2.
        ShardCase{
            "parameters_transformer_bf16",
            test::half_width("transformer",
                             {"distributed.shard=parameters", "model.kind=transformer",
                              "memory.checkpointing=layers", "train.accumulation=2",
                              "train.max_len=32", "memory.precision=bf16", test::kBf16Batch})},
        ShardCase{"parameters_bilstm_frozen_table",
                  {"distributed.shard=parameters", "model.kind=bilstm",
                   "embeddings.trainable=false", "train.max_len=32", "eval.no_grad=false"}}),
    [](const ::testing::TestParamInfo<ShardCase>& shard) { return std::string(shard.param.name); });

std::int64_t predicted_peak(const std::vector<std::string>& settings) {
    std::vector<std::string> arguments{"estimate", "--nproc", "2", "--json"};
    for (const std::string& setting : settings) {
        arguments.insert(arguments.end(), {"--set", setting});
    }
    const test::CliResult predicted = test::run_cli(arguments);
    EXPECT_EQ(predicted.exit_code, 0) << predicted.err;
    return nlohmann::json::parse(predicted.out)["peak_bytes"].get<std::int64_t>();
}

// Each rank's shard of the optimizer state is optimizer state, whatever moment its peak falls
// at. With a table large enough that rank 0's peak falls inside the first update, while its
// shard is being allocated, rank 0 reported none (its shard counted as activations).
TEST(DataParallel, EveryRankReportsItsOwnShardOfTheOptimizerState) {
    for (const std::string processes : {"2", "3"}) {
        test::TempDir dir;
        const std::string db = dir.file("runs.sqlite");
        std::vector<std::string> arguments =
            short_run(db, {"train.optimizer=adam", "distributed.shard=optimizer",
                           "embeddings.variant=6B.100d", "embeddings.trainable=true"});
        arguments[2] = processes;  // --nproc
        const test::CliResult ran = test::run_cli(arguments);
        ASSERT_EQ(ran.exit_code, 0) << processes << " processes: " << ran.err;
        const nlohmann::json run = test::show_run_json(db, 1);
        ASSERT_EQ(run["ranks"].size(), std::stoul(processes)) << run.dump();
        // Adam keeps two values per trainable value; each rank 1/N of them.
        const double share =
            2.0 * run["ranks"][0]["parameters"].get<double>() / std::stod(processes);
        for (const auto& rank : run["ranks"]) {
            EXPECT_NEAR(rank["optimizer_state"].get<double>() / share, 1.0, 0.1)
                << processes << " processes, rank " << rank["rank"];
        }
        EXPECT_NEAR(run["breakdown"]["optimizer_state"].get<double>() / share, 1.0, 0.1)
            << processes << " processes: rank 0's breakdown";
        // Rank 0's shard is the first 1/N of the flattened parameters, all of it the table's:
        // its state is the table's, as predicted, and nothing else is off.
        EXPECT_EQ(run["against_prediction"]["disagreements"], 0)
            << processes << " processes: " << run["against_prediction"].dump(1);
    }
}

// Against its prediction, rank 0 of a transformer trained as 2 ranks holds every figure in
// place, sharded or not (the state of the first half of the flattened parameters is all in
// the embeddings: the blocks' state is rank 1's).
TEST(DataParallel, ShardingDividesOptimizerStateAndGradientsAsTheEstimatorPredicts) {
    test::TempDir dir;
    const std::string db = dir.file("runs.sqlite");
    std::map<std::string, nlohmann::json> ranks;
    // Buckets smaller than the 2.5 MB of gradients: ZeRO-2 frees them as they are summed. The
    // default 25 MiB bucket holds all of them and waits whole until the end of backward.
    const std::vector<std::pair<std::string, std::string>> runs = {
        {"none", "1"}, {"optimizer", "1"}, {"gradients", "1"}, {"gradients", "25"}};
    for (const auto& [shard, bucket_mb] : runs) {
        const std::string label = shard + ", " + bucket_mb + " MiB buckets";
        const std::vector<std::string> settings{"train.optimizer=adam",
                                                "distributed.shard=" + shard,
                                                "distributed.bucket_mb=" + bucket_mb};
        const test::CliResult ran = test::run_cli(short_run(db, settings));
        ASSERT_EQ(ran.exit_code, 0) << label << ": " << ran.err;
        const RunStore store = RunStore::open(db);
        const nlohmann::json shown = test::show_run_json(db, store.list_runs().front().id)["ranks"];
        ASSERT_EQ(shown.size(), 2u) << label;
        if (bucket_mb == "1") {
            ranks[shard] = shown;
        }
        const double peak = static_cast<double>(predicted_peak(settings));
        for (const auto& rank : shown) {
            EXPECT_NEAR(peak / rank["peak_bytes"].get<double>(), 1.0, 0.10)
                << label << ", rank " << rank["rank"] << ": predicted " << peak;
        }
    }
    const auto field = [&](const std::string& shard, int rank, const char* name) {
        return ranks[shard][rank][name].get<double>();
    };
    for (int rank = 0; rank < 2; ++rank) {
        const double state = field("none", rank, "optimizer_state");
        const double gradients = field("none", rank, "gradients");
        EXPECT_NEAR(field("optimizer", rank, "optimizer_state") / state, 0.5, 0.025) << rank;
        EXPECT_DOUBLE_EQ(field("optimizer", rank, "gradients"), gradients)
            << "ZeRO-1 keeps every gradient";
        EXPECT_NEAR(field("gradients", rank, "optimizer_state") / state, 0.5, 0.025) << rank;
        // ZeRO-2 keeps its half of the summed gradients: its peak is lower than ZeRO-1's by
        // half of them (at the peak itself one full gradient, the table's, exists once before
        // its sum, where ZeRO-1 holds every gradient).
        const double saved =
            field("optimizer", rank, "peak_bytes") - field("gradients", rank, "peak_bytes");
        EXPECT_NEAR(saved / (gradients / 2), 1.0, 0.1)
            << "ZeRO-2 saves half of the gradients, rank " << rank;
    }
}

// Both ranks hit the cap at the same step: with stop the run ends out of memory on every rank
// (no rank left waiting), with adapt every rank halves its micro-batch and finishes.
TEST(DataParallel, AnOutOfMemoryStopsOrAdaptsEveryRankTogether) {
    const std::vector<std::string> model{"model.kind=transformer", "train.max_len=32",
                                         "train.optimizer=sgd"};
    std::vector<std::string> whole = model;
    whole.push_back("train.batch_size=64");
    std::vector<std::string> half = model;
    half.insert(half.end(), {"train.batch_size=32", "train.accumulation=2"});
    const std::int64_t fits = predicted_peak(half);
    ASSERT_LT(fits * 1.2, predicted_peak(whole));
    std::vector<std::string> capped = whole;
    capped.push_back("memory.cap_mb=" + std::to_string(std::int64_t(fits * 1.1) >> 20));

    test::TempDir dir;
    const std::string db = dir.file("runs.sqlite");
    const test::CliResult stopped = test::run_cli(short_run(db, capped));
    EXPECT_EQ(stopped.exit_code, 3) << stopped.err;
    {
        const RunStore store = RunStore::open(db);
        const RunRecord run = store.list_runs().front();
        EXPECT_EQ(run.outcome.status, RunStatus::Oom) << run.outcome.error;
        std::set<int> ranks_with_oom_row;
        for (const MetricRow& row : store.metrics(run.id)) {
            if (row.phase == "oom") {
                ranks_with_oom_row.insert(row.rank);
            }
        }
        EXPECT_EQ(ranks_with_oom_row, (std::set<int>{0, 1}));
    }

    capped.push_back("memory.on_oom=adapt");
    const test::CliResult adapted = test::run_cli(short_run(db, capped));
    ASSERT_EQ(adapted.exit_code, 0) << adapted.err;
    const RunStore store = RunStore::open(db);
    const RunRecord run = store.list_runs().front();
    EXPECT_EQ(run.outcome.status, RunStatus::Completed);
    EXPECT_EQ(run.outcome.steps, kShortRunSteps);
    EXPECT_EQ(run.outcome.batch_size, 32);
    EXPECT_EQ(run.outcome.accumulation, 2);
    int adapt_events = 0;
    for (const EventRow& event : store.events(run.id)) {
        adapt_events += event.kind == "adapt";
    }
    EXPECT_EQ(adapt_events, 2) << "one from each rank";
}

// Evaluation without no_grad keeps every batch's graph, and the ranks evaluate different
// batches: under a cap between their peaks one rank runs out of memory in its share and the
// other does not. Both still end out of memory, together, rather than one failing at the sums.
TEST(DataParallel, AnOutOfMemoryInOneRanksEvaluationEndsEveryRank) {
    const std::vector<std::string> settings{"model.kind=transformer", "train.max_len=32",
                                            "train.optimizer=sgd", "eval.no_grad=false"};
    test::TempDir dir;
    const std::string db = dir.file("runs.sqlite");
    ASSERT_EQ(test::run_cli(short_run(db, settings)).exit_code, 0);
    const nlohmann::json ranks =
        test::show_run_json(db, RunStore::open(db).list_runs().front().id)["ranks"];
    ASSERT_EQ(ranks.size(), 2u);
    const std::int64_t low = std::min(ranks[0]["peak_bytes"].get<std::int64_t>(),
                                      ranks[1]["peak_bytes"].get<std::int64_t>());
    const std::int64_t high = std::max(ranks[0]["peak_bytes"].get<std::int64_t>(),
                                       ranks[1]["peak_bytes"].get<std::int64_t>());
    ASSERT_GT(high - low, std::int64_t{4} << 20) << "the ranks' evaluations must differ";

    const RunRecord run = every_rank_ends_out_of_memory(db, settings, low, high).run;
    EXPECT_NE(run.outcome.error.find("during eval"), std::string::npos) << run.outcome.error;
}

// TREC with the GloVe excerpt, effective batch 32: two ranks of 16 learn what one process of
// 32 learns. 2 epochs reach about 73% either way, where always answering the commonest class
// gives 28%; 3 reach 78%, 5 86%. The ranks' sums of the embedding table's dense gradients are
// most of the time.
TEST(DataParallel, TwoRanksReachTheAccuracyOfOneWithTheSameEffectiveBatch) {
    OOMLAB_REQUIRE_SHARED_DATA("trec.train.txt");
    const std::string data = test::shared_data_dir();
    test::TempDir dir;
    const std::string db = dir.file("runs.sqlite");
    const auto accuracy = [&](int processes) {
        const test::CliResult ran = test::run_cli(
            {"run", "--nproc", std::to_string(processes), "--db", db, "--set",
             "dataset.path=" + data + "/trec.train.txt", "--set",
             "dataset.valid_path=" + data + "/trec.test.txt", "--set", "embeddings.source=file",
             "--set", "embeddings.path=" + data + "/glove.6B.50d.head2446.txt", "--set",
             "model.kind=bag", "--set", "train.epochs=2", "--set",
             "train.batch_size=" + std::to_string(32 / processes)});
        EXPECT_EQ(ran.exit_code, 0) << ran.err;
        const RunStore store = RunStore::open(db);
        return store.list_runs().front().outcome.val_accuracy.value_or(0);
    };
    const double alone = accuracy(1);
    const double together = accuracy(2);
    EXPECT_GT(alone, 0.7);
    EXPECT_NEAR(together, alone, 0.02);
}

// Under torchrun every process would run the whole sweep or lesson on its own.
TEST(DataParallel, CommandsThatCannotBeOneRankRefuseAGroup) {
    test::TempDir dir;
    const std::vector<std::string> group{"WORLD_SIZE=2", "RANK=0", "MASTER_ADDR=127.0.0.1",
                                         "MASTER_PORT=29500"};
    const std::string db = dir.file("runs.sqlite");
    for (const std::vector<std::string>& command :
         {std::vector<std::string>{"sweep", "--db", db, "--grid", "train.batch_size=8,16"},
          std::vector<std::string>{"lesson", "run", "sharding-the-optimizer-state", "--db", db}}) {
        const test::CliResult refused = test::run_cli(command, group);
        EXPECT_EQ(refused.exit_code, 2) << command[0];
        EXPECT_NE(refused.err.find("only `oomlab-cli run` trains as one rank"), std::string::npos)
            << refused.err;
    }
    EXPECT_FALSE(std::filesystem::exists(db)) << "nothing was trained";
    EXPECT_EQ(test::run_cli({"estimate", "--nproc", "2"}, group).exit_code, 0);  // no training
}

// A config every rank refuses is said once, as one process would say it, with exit code 2.
TEST(DataParallel, AConfigEveryRankRefusesIsOneMessage) {
    test::TempDir dir;
    const test::CliResult refused =
        test::run_cli(short_run(dir.file("runs.sqlite"), {"distributed.backend=nccl"}));
    EXPECT_EQ(refused.exit_code, 2);
    EXPECT_EQ(refused.err,
              "error: distributed.backend=nccl needs a CUDA device (device=cpu); use gloo, or "
              "auto, on the CPU\n");
    // Fewer examples than processes: how many processes it can have, not "at most 0".
    const std::string tiny = dir.file("two.tsv");
    test::write_file(tiny, "a good movie\tpositive\na bad movie\tnegative\n");
    const test::CliResult few =
        test::run_cli({"run", "--nproc", "3", "--db", dir.file("runs.sqlite"), "--set",
                       "dataset.path=" + tiny, "--set", "dataset.valid_path=" + tiny, "--set",
                       "train.batch_size=1", "--set", "distributed.timeout_s=20"});
    EXPECT_EQ(few.exit_code, 2);
    EXPECT_EQ(few.err,
              "error: dataset.path: its 2 training examples are fewer than the 3 processes, and "
              "each needs a batch of its own; use at most 2 processes, or a larger dataset\n");
    // An interface this machine lacks, alone or after one it has, is named with the variable
    // (Gloo's own enforce text came after the rendezvous; "lo,nosuchif" was taken for another
    // program on the port).
    for (const char* interfaces : {"nosuchif", "lo,nosuchif"}) {
        const test::CliResult named =
            test::run_cli(short_run(dir.file("runs.sqlite"), {}),
                          {std::string("GLOO_SOCKET_IFNAME=") + interfaces});
        EXPECT_EQ(named.exit_code, 2) << interfaces;
        EXPECT_NE(named.err.find("environment variable GLOO_SOCKET_IFNAME is \"" +
                                 std::string(interfaces) +
                                 "\": this machine has no network interface \"nosuchif\""),
                  std::string::npos)
            << named.err;
        EXPECT_EQ(std::count(named.err.begin(), named.err.end(), '\n'), 1) << named.err;
    }
}

TEST(DataParallel, AnIncompleteEnvironmentNamesTheMissingVariable) {
    test::TempDir dir;
    const test::CliResult ran = test::run_cli(
        {"run", "--db", dir.file("runs.sqlite"), "--set", "train.max_steps=1"}, {"WORLD_SIZE=2"});
    EXPECT_EQ(ran.exit_code, 2);
    EXPECT_NE(ran.err.find("environment variable RANK is not set"), std::string::npos) << ran.err;
    const test::CliResult out_of_range =
        test::run_cli({"run", "--db", dir.file("runs.sqlite"), "--set", "train.max_steps=1"},
                      {"WORLD_SIZE=2", "RANK=2"});
    EXPECT_EQ(out_of_range.exit_code, 2);
    EXPECT_NE(out_of_range.err.find("RANK"), std::string::npos) << out_of_range.err;
    // No default rendezvous a peer elsewhere would never find, and no waiting on a host
    // that does not exist: both refused at once.
    const test::CliResult no_address =
        test::run_cli({"run", "--db", dir.file("runs.sqlite"), "--set", "train.max_steps=1"},
                      {"WORLD_SIZE=2", "RANK=1", "MASTER_PORT=29500"});
    EXPECT_EQ(no_address.exit_code, 2);
    EXPECT_NE(no_address.err.find("environment variable MASTER_ADDR is not set"), std::string::npos)
        << no_address.err;
    const test::CliResult unknown_host = test::run_cli(
        {"run", "--db", dir.file("runs.sqlite"), "--set", "train.max_steps=1"},
        {"WORLD_SIZE=2", "RANK=1", "MASTER_PORT=29500", "MASTER_ADDR=no-such-host.invalid"});
    EXPECT_EQ(unknown_host.exit_code, 2);
    EXPECT_NE(unknown_host.err.find("cannot find the host \"no-such-host.invalid\""),
              std::string::npos)
        << unknown_host.err;
}

// A rank whose rendezvous never answers says so once, as the engine's error: c10d's own log line
// of the same failure stays off standard error unless the user asks for LibTorch's logs.
TEST(DataParallel, AnUnansweredRendezvousIsOneError) {
    test::TempDir dir;
    const std::string port = std::to_string(free_loopback_port());
    const std::vector<std::string> arguments{"run",
                                             "--db",
                                             dir.file("runs.sqlite"),
                                             "--set",
                                             "train.max_steps=1",
                                             "--set",
                                             "distributed.timeout_s=1"};
    const std::vector<std::string> environment{"WORLD_SIZE=2", "RANK=1", "MASTER_ADDR=127.0.0.1",
                                               "MASTER_PORT=" + port};
    const test::CliResult ran = test::run_cli(arguments, environment);
    EXPECT_EQ(ran.exit_code, 1);
    // The rank and its machine, then what it could not reach.
    EXPECT_EQ(ran.err.rfind("error: rank 1 of 2 on ", 0), 0u) << ran.err;
    EXPECT_NE(ran.err.find(" (127.0.0.1): cannot reach the rendezvous at 127.0.0.1:" + port +
                           " (MASTER_ADDR, MASTER_PORT): "),
              std::string::npos)
        << ran.err;
    EXPECT_EQ(std::count(ran.err.begin(), ran.err.end(), '\n'), 1) << ran.err;

    std::vector<std::string> logging = environment;
    logging.push_back("TORCH_CPP_LOG_LEVEL=INFO");
    const test::CliResult logged = test::run_cli(arguments, logging);
    EXPECT_EQ(logged.exit_code, 1);
    EXPECT_GT(std::count(logged.err.begin(), logged.err.end(), '\n'), 1) << logged.err;
}

}  // namespace
}  // namespace oomlab
