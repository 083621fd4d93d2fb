// Each rank of a 2-process run against its stored prediction, through the real binary: the three
// models x the four shard modes (none and ZeRO-1, 2 and 3), every category and module within 10%
// (or 64 KiB). Batches are padded to max_len, so every step is the worst one the estimator assumes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "grid_sample.h"
#include "prediction_misses.h"
#include "test_support.h"

namespace oomlab {
namespace {

struct ShardCell {
    std::string model;
    std::string shard;
};

std::string cell_name(const testing::TestParamInfo<ShardCell>& info) {
    return info.param.model + "_" + info.param.shard;
}

void PrintTo(const ShardCell& c, std::ostream* out) {
    *out << c.model << ", shard=" << c.shard;
}

std::string known_miss(const ShardCell& c, const nlohmann::json& row) {
    // Every cell: 2 layers, fp32, no accumulation.
    return test::known_miss({c.model, "fp32", c.shard}, row["category"], row["module"]);
}

class ShardPredictionGrid : public testing::TestWithParam<ShardCell> {};

TEST_P(ShardPredictionGrid, EveryRankHoldsWhatTheEstimatorPredicts) {
    const ShardCell& cell = GetParam();
    test::TempDir dir;
    const std::string db = dir.file("runs.sqlite");
    std::vector<std::string> arguments{"run", "--nproc", "2", "--db", db};
    for (const std::string& setting : std::vector<std::string>{
             "train.max_steps=4", "distributed.timeout_s=20", "train.optimizer=adam",
             "train.padding=fixed", "train.max_len=24", "embeddings.trainable=true",
             "model.layers=2", "model.kind=" + cell.model, "distributed.shard=" + cell.shard}) {
        arguments.insert(arguments.end(), {"--set", setting});
    }
    const test::CliResult ran = test::run_cli(arguments);
    ASSERT_EQ(ran.exit_code, 0) << ran.err;
    const nlohmann::json run = test::show_run_json(db, 1);
    const nlohmann::json& check = run["against_prediction"];
    ASSERT_EQ(check["not_comparable"], "") << check.dump(1);
    ASSERT_FALSE(check["by_module"].empty()) << "the CPU measures every module";
    for (const char* rows : {"by_category", "by_module"}) {
        for (const nlohmann::json& row : check[rows]) {
            if (row["disagrees"].get<bool>() && known_miss(cell, row).empty()) {
                ADD_FAILURE() << row.dump() << "\n" << check.dump(1);
            }
        }
    }
    // Every rank holds its own share of the state: the first rank is the one predicted.
    for (const nlohmann::json& rank : run["ranks"]) {
        EXPECT_GT(rank["optimizer_state"].get<std::int64_t>(), 0) << rank.dump();
    }
    // The peak holds within 10% also where the activations are placed at another moment.
    const nlohmann::json& peak = check["by_category"][0];
    ASSERT_EQ(peak["category"], "peak");
    EXPECT_FALSE(peak["disagrees"].get<bool>()) << peak.dump();
}

std::vector<ShardCell> cells() {
    std::vector<ShardCell> cells;
    for (const char* model : {"bag", "bilstm", "transformer"}) {
        for (const char* shard : {"none", "optimizer", "gradients", "parameters"}) {
            cells.push_back({model, shard});
        }
    }
    return cells;
}

INSTANTIATE_TEST_SUITE_P(ThreeModelsFourShardModes, ShardPredictionGrid,
                         testing::ValuesIn(test::grid_sample(cells())), cell_name);

}  // namespace
}  // namespace oomlab
