#include "oomlab/run/prediction_record.h"

#include <gtest/gtest.h>
#include "test_support.h"

namespace oomlab {
namespace {

RunRecord run(std::int64_t id, RunStatus status, std::int64_t predicted, std::int64_t measured,
              const char* model = "bag") {
    RunRecord record;
    record.id = id;
    record.name = "run " + std::to_string(id);
    record.config_json = std::string(R"({"model":{"kind":")") + model + R"("}})";
    record.outcome = RunOutcome(status);
    record.outcome.steps = 5;
    record.outcome.peak_bytes = measured;
    record.outcome.breakdown.activations = measured;
    if (predicted > 0) {
        record.prediction = MemoryPrediction{};
        record.prediction->peak_bytes = predicted;
        record.prediction->breakdown.activations = predicted;
    }
    return record;
}

using test::kMiB;

TEST(PredictionRecord, CountsCompletedRunsUnderTheirPeakWorstFirst) {
    const std::vector<RunRecord> runs = {
        run(1, RunStatus::Completed, 100 * kMiB, 110 * kMiB),  // 10% under
        run(2, RunStatus::Completed, 100 * kMiB, 80 * kMiB),   // 20% over
        run(3, RunStatus::Completed, 100 * kMiB, 102 * kMiB),  // 2% under
        run(4, RunStatus::Oom, 100 * kMiB, 150 * kMiB),        // not held to it
        run(5, RunStatus::Completed, 0, 50 * kMiB),            // no prediction stored
        run(6, RunStatus::Completed, 10 * kMiB, 30 * kMiB, "transformer"),
    };
    const PredictionRecord record = prediction_record(runs, 10, "bag");
    EXPECT_EQ(record.runs, 3);
    EXPECT_EQ(record.under, 2);
    EXPECT_NEAR(record.worst_under, 0.10, 1e-9);
    EXPECT_EQ(record.outside_tolerance, 1);  // run 2; run 1 is at 10%, not past it
    ASSERT_EQ(record.worst.size(), 3u);
    EXPECT_EQ(record.worst[0].run_id, 2);
    EXPECT_EQ(record.worst[1].run_id, 1);
    EXPECT_EQ(record.worst[2].run_id, 3);
    EXPECT_EQ(
        describe(record),
        "3 runs here checked against the estimate: 2 needed more than it said, by at most 10.0%");

    const PredictionRecord all = prediction_record(runs, 1);
    EXPECT_EQ(all.runs, 4);
    ASSERT_EQ(all.worst.size(), 1u);
    EXPECT_EQ(all.worst[0].run_id, 6);  // 200% under
    EXPECT_EQ(all.worst[0].model, "transformer");
    EXPECT_EQ(describe(prediction_record({}, 5)),
              "no completed run here was held to its prediction yet");
    // Run 2 alone: it peaked under its prediction.
    EXPECT_EQ(describe(prediction_record({runs[1]}, 5)),
              "1 run here checked against the estimate: none needed more than it said");
}

}  // namespace
}  // namespace oomlab
