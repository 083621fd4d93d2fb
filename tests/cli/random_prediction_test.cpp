// The estimator on configurations no grid was written for: drawn at random (seeded) from the
// keys that change memory (model, optimizer, precision, padding, accumulation, checkpointing,
// vocabulary, data loading, dropout, shapes, and shard modes at 1 to 3 processes), each trained
// through the real binary and held to its stored prediction. The peak within 5% in the median
// and 10% at worst; every category and module within 10% (or 64 KiB), unless a known cause is
// given (the run's own, or tests/support/prediction_misses.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "grid_sample.h"
#include "prediction_misses.h"
#include "test_support.h"

namespace oomlab {
namespace {

struct DrawnRun {
    int processes = 1;
    std::vector<std::string> settings;  // KEY=VALUE
    test::PredictedRun traits;
};

class Draw {
public:
    explicit Draw(std::uint32_t seed) : m_random(seed) {}

    template <typename T>
    T pick(const std::vector<T>& choices) {
        return choices[m_random() % choices.size()];
    }

    DrawnRun run() {
        DrawnRun drawn;
        drawn.processes = pick<int>({1, 1, 2, 3});
        test::PredictedRun& t = drawn.traits;
        t.model = pick<std::string>({"bag", "bilstm", "transformer"});
        t.precision = pick<std::string>({"fp32", "bf16"});
        t.layers = pick<int>({1, 2, 3});
        t.accumulation = pick<int>({1, 1, 2, 4});
        drawn.settings = {
            "model.kind=" + t.model,
            "memory.precision=" + t.precision,
            "model.layers=" + std::to_string(t.layers),
            "train.accumulation=" + std::to_string(t.accumulation),
            "train.optimizer=" + pick<std::string>({"sgd", "momentum", "adam", "adamw", "adagrad"}),
            "train.padding=" + pick<std::string>({"dynamic", "bucket", "fixed"}),
            "train.batch_size=" + pick<std::string>({"8", "16", "32", "64"}),
            "train.max_len=" + pick<std::string>({"16", "32", "64"}),
            "train.max_steps=" + pick<std::string>({"2", "3", "5"}),
            "dataset.valid_ratio=" + pick<std::string>({"0", "0.1"}),
            "embeddings.vocab=" + pick<std::string>({"dataset", "dataset", "top:5000"}),
            "embeddings.trainable=" + pick<std::string>({"true", "false"}),
            "data.loading=" + pick<std::string>({"streaming", "eager"}),
            "model.dropout=" + pick<std::string>({"0", "0.1"}),
        };
        if (t.model == "transformer") {
            drawn.settings.push_back("memory.checkpointing=" +
                                     pick<std::string>({"none", "layers"}));
        }
        if (drawn.processes > 1) {
            t.shard = pick<std::string>({"none", "optimizer", "gradients", "parameters"});
            drawn.settings.push_back("distributed.shard=" + t.shard);
            drawn.settings.push_back("distributed.timeout_s=30");
        }
        return drawn;
    }

private:
    std::mt19937 m_random;
};

std::string describe(const DrawnRun& drawn) {
    std::ostringstream text;
    text << drawn.processes << " process(es):";
    for (const std::string& setting : drawn.settings) {
        text << ' ' << setting;
    }
    return text.str();
}

// The draw is trained in four quarters (every fourth draw, so that the costly ones spread),
// tests of their own that ctest runs beside the others (the 16 runs one after another were the
// suite's longest test, then each half of them). Each quarter holds its own median, which holds
// the whole draw's: 3 of each 4 within 5% are 12 of 16.
constexpr int kDraws = 16;
constexpr int kParts = 4;

class RandomConfigurations : public ::testing::TestWithParam<int> {};

std::vector<DrawnRun> part_of_the_draw(int part) {
    Draw draw(2026);
    std::vector<DrawnRun> runs;
    for (int i = 0; i < kDraws; ++i) {
        DrawnRun drawn = draw.run();
        if (i % kParts == part) {
            runs.push_back(std::move(drawn));
        }
    }
    return runs;
}

TEST_P(RandomConfigurations, ThePeakAndEveryFigureAreWhereTheEstimatorSaid) {
    const std::vector<DrawnRun> runs = part_of_the_draw(GetParam());
    std::vector<double> peak_offs;
    for (const DrawnRun& drawn : test::grid_sample(runs)) {
        test::TempDir dir;
        const std::string db = dir.file("runs.sqlite");
        std::vector<std::string> arguments{"run",        "--nproc", std::to_string(drawn.processes),
                                           "--db",       db,        "--set",
                                           "device=cpu", "--set",   "embeddings.source=synthetic"};
        for (const std::string& setting : drawn.settings) {
            arguments.insert(arguments.end(), {"--set", setting});
        }
        const test::CliResult ran = test::run_cli(arguments);
        ASSERT_EQ(ran.exit_code, 0) << describe(drawn) << "\n" << ran.err;
        const nlohmann::json check = test::show_run_json(db, 1)["against_prediction"];
        ASSERT_EQ(check["not_comparable"], "") << describe(drawn);
        for (const char* rows : {"by_category", "by_module"}) {
            for (const nlohmann::json& row : check[rows]) {
                const bool explained =
                    !row["why"].get<std::string>().empty() ||
                    !test::known_miss(drawn.traits, row["category"], row["module"]).empty();
                EXPECT_TRUE(!row["disagrees"].get<bool>() || explained) << describe(drawn) << "\n"
                                                                        << row.dump();
            }
        }
        const nlohmann::json& peak = check["by_category"][0];
        ASSERT_EQ(peak["category"], "peak");
        double predicted = peak["predicted"].get<double>();
        // A run whose peak came before the optimizer made its state (the first step drew the
        // longest batch; `runs show` says so) is held to the prediction without that state.
        for (const nlohmann::json& row : check["by_category"]) {
            if (row["category"] == "optimizer_state" && row["measured"] == 0 &&
                !row["why"].get<std::string>().empty()) {
                predicted -= row["predicted"].get<double>();
            }
        }
        peak_offs.push_back(std::abs(peak["measured"].get<double>() - predicted) / predicted);
        EXPECT_TRUE(peak_offs.back() <= 0.10 || !test::known_miss(drawn.traits, "peak", "").empty())
            << describe(drawn) << "\n"
            << peak.dump();
    }
    ASSERT_FALSE(peak_offs.empty());
    std::sort(peak_offs.begin(), peak_offs.end());
    std::ostringstream all;
    for (const double off : peak_offs) {
        all << ' ' << off;
    }
    // The median of the quarter: a build that runs a sample of it (grid_sample) has too few runs
    // for one.
    if (peak_offs.size() == runs.size()) {
        EXPECT_LE(peak_offs[peak_offs.size() / 2], 0.05)
            << "the median miss of the peak:" << all.str();
    }
}

INSTANTIATE_TEST_SUITE_P(Draw2026, RandomConfigurations, ::testing::Range(0, kParts),
                         [](const ::testing::TestParamInfo<int>& part) {
                             return "Quarter" + std::to_string(part.param + 1);
                         });

}  // namespace
}  // namespace oomlab
