// ZeRO-3 (distributed.shard=parameters) at 2 ranks through the real binary: what each rank
// keeps, that it trains as ZeRO-2 does, and a rank that leaves a step while the other gathers
// and sums on. The grid against the estimator is shard_prediction_grid_test.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "cli_runner.h"
#include "data_parallel_runs.h"
#include "oomlab/store/run_store.h"
#include "test_support.h"

namespace oomlab {
namespace {

// ZeRO-3 keeps each rank's half of the parameters between a part's uses and gathers the rest
// from its owner for each forward and backward: the values gathered are the ones ZeRO-2
// broadcasts after each update, so the two train to the same bytes, and each rank's peak is
// lower by half of the parameters (the bag model's table gathers for its forward only).
TEST(DataParallel, ZeroThreeKeepsEachRanksRangeOfTheParametersAndTrainsAsZeroTwo) {
    test::TempDir dir;
    const std::string db = dir.file("runs.sqlite");
    std::map<std::string, nlohmann::json> ranks;
    std::map<std::string, std::string> hash;
    for (const std::string shard : {"gradients", "parameters"}) {
        const test::CliResult ran =
            test::run_cli(short_run(db, {"train.optimizer=adam", "embeddings.trainable=true",
                                         "distributed.shard=" + shard, "distributed.bucket_mb=1"}));
        ASSERT_EQ(ran.exit_code, 0) << shard << ": " << ran.err;
        const RunStore store = RunStore::open(db);
        const RunRecord run = store.list_runs().front();
        const auto hashes = parameter_hashes(store, run.id);
        ASSERT_EQ(hashes.size(), 2u) << shard;
        EXPECT_EQ(hashes.at("rank 0"), hashes.at("rank 1")) << shard;
        hash[shard] = hashes.at("rank 0");
        ranks[shard] = test::show_run_json(db, run.id)["ranks"];
        ASSERT_EQ(ranks[shard].size(), 2u) << shard;
    }
    EXPECT_EQ(hash["parameters"], hash["gradients"]) << "ZeRO-3 trains as ZeRO-2 does";
    for (int rank = 0; rank < 2; ++rank) {
        const auto field = [&](const std::string& shard, const char* name) {
            return ranks[shard][rank][name].get<double>();
        };
        const double parameters = field("gradients", "parameters");
        EXPECT_NEAR(field("parameters", "parameters") / parameters, 0.5, 0.05) << rank;
        EXPECT_DOUBLE_EQ(field("parameters", "optimizer_state"),
                         field("gradients", "optimizer_state"))
            << rank;
        const double saved = field("gradients", "peak_bytes") - field("parameters", "peak_bytes");
        EXPECT_NEAR(saved / (parameters / 2), 1.0, 0.1) << "rank " << rank;
    }
}

// Under ZeRO-3 a rank gathers parameters and sums gradients all through forward and backward.
// Batches bucketed by length make the ranks' steps differ; under a cap between their peaks in
// a later step one rank runs out of memory mid-step while the other trains on. The rank that
// left makes every gather and sum the other still makes in the step (their sequence learned
// from the first step), so both end out of memory together instead of one waiting out
// distributed.timeout_s in a collective nobody answers.
TEST(DataParallel, ARankOutOfMemoryMidStepUnderZeroThreeStillMeetsTheOthers) {
    const std::vector<std::string> settings{"model.kind=transformer",
                                            "model.d_model=64",
                                            "model.ffn=128",
                                            "train.max_len=256",
                                            "train.padding=bucket",
                                            "train.optimizer=sgd",
                                            "distributed.shard=parameters",
                                            "distributed.timeout_s=60"};
    test::TempDir dir;
    const std::string db = dir.file("runs.sqlite");
    ASSERT_EQ(test::run_cli(short_run(db, settings)).exit_code, 0);
    // The first step after the first whose ranks' peaks differ most.
    std::map<std::int64_t, std::map<int, std::int64_t>> step_peaks;
    {
        const RunStore store = RunStore::open(db);
        for (const MetricRow& row : store.metrics(store.list_runs().front().id)) {
            if (row.phase == "step" && row.step >= 2 && row.peak_bytes) {
                step_peaks[row.step][row.rank] = *row.peak_bytes;
            }
        }
    }
    std::int64_t low = 0;
    std::int64_t high = 0;
    for (const auto& [step, peaks] : step_peaks) {
        ASSERT_EQ(peaks.size(), 2u) << "step " << step;
        const auto [a, b] = std::minmax(peaks.at(0), peaks.at(1));
        if (b - a > high - low && a > std::max<std::int64_t>(high, 0)) {
            std::tie(low, high) = std::make_pair(a, b);
        }
    }
    ASSERT_GT(high - low, std::int64_t{16} << 20) << "the ranks' steps must differ";

    const CappedRun capped = every_rank_ends_out_of_memory(db, settings, low, high);
    EXPECT_GE(capped.run.outcome.steps, 1) << "the first step, which taught the sequence, ended";
    EXPECT_NE(capped.ran.err.find("of the run ran out of memory"), std::string::npos)
        << "the rank that went on says which rank did: " << capped.ran.err;
}

}  // namespace
}  // namespace oomlab
