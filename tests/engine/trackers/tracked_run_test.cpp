#include "oomlab/trackers/tracked_run.h"

#include <gtest/gtest.h>

#include "oomlab/trackers/mlflow_export.h"
#include "oomlab/trackers/tensorboard_export.h"

namespace oomlab::trackers {
namespace {

MetricRow row(int step, std::string_view phase_name, int rank = 0) {
    MetricRow metric;
    metric.step = step;
    metric.phase = std::string(phase_name);
    metric.wall_ms = 10.0 * step;
    metric.rank = rank;
    return metric;
}

const Series* find(const std::vector<Series>& all, const std::string& name) {
    for (const Series& series : all) {
        if (series.name == name) {
            return &series;
        }
    }
    return nullptr;
}

TEST(RunSeries, StepRowsInMiBEvalRowsApartOtherRanksPrefixed) {
    TrackedRun tracked;
    MetricRow step = row(1, phase::kStep);
    step.loss = 2.5;
    step.allocated_bytes = 3 << 20;
    step.peak_bytes = 5 << 19;
    tracked.metrics.push_back(step);
    MetricRow forward = row(1, phase::kForward);  // a phase inside a step: not a series point
    forward.allocated_bytes = 9 << 20;
    tracked.metrics.push_back(forward);
    MetricRow eval = row(1, phase::kEval);
    eval.loss = 2.0;
    eval.accuracy = 0.25;
    tracked.metrics.push_back(eval);
    MetricRow other_rank = row(1, phase::kStep, 1);
    other_rank.peak_bytes = 1 << 20;
    tracked.metrics.push_back(other_rank);

    const std::vector<Series> all = run_series(tracked);
    ASSERT_NE(find(all, "memory/allocated_MiB"), nullptr);
    EXPECT_EQ(find(all, "memory/allocated_MiB")->points.size(), 1u);
    EXPECT_DOUBLE_EQ(find(all, "memory/allocated_MiB")->points[0].value, 3.0);
    EXPECT_DOUBLE_EQ(find(all, "memory/peak_MiB")->points[0].value, 2.5);
    EXPECT_DOUBLE_EQ(find(all, "train/loss")->points[0].value, 2.5);
    EXPECT_DOUBLE_EQ(find(all, "eval/loss")->points[0].value, 2.0);
    EXPECT_DOUBLE_EQ(find(all, "eval/accuracy")->points[0].value, 0.25);
    EXPECT_DOUBLE_EQ(find(all, "rank 1/memory/peak_MiB")->points[0].value, 1.0);
    EXPECT_EQ(find(all, "memory/reserved_MiB"), nullptr);  // never measured: no series
    EXPECT_EQ(all.size(), 6u);
}

// MLflow's UI charts a GPU's memory among its system metrics by their names: a CUDA run's
// device memory goes there too, in MLflow's megabytes (10^6 bytes), on the GPU the run used;
// TensorBoard gets run_series alone.
TEST(MlflowSeries, ACudaRunsDeviceMemoryIsAlsoUnderMlflowsSystemMetricName) {
    TrackedRun tracked;
    tracked.run.device = "cuda:1";
    MetricRow step = row(3, phase::kStep);
    step.device_used_bytes = std::int64_t{5000} << 20;
    tracked.metrics.push_back(step);
    MetricRow other_rank = row(3, phase::kStep, 1);
    other_rank.device_used_bytes = std::int64_t{1} << 30;
    tracked.metrics.push_back(other_rank);

    const std::vector<Series> all = mlflow_series(tracked);
    const Series* gpu = find(all, "system/gpu_1_memory_usage_megabytes");
    ASSERT_NE(gpu, nullptr);
    ASSERT_EQ(gpu->points.size(), 1u);
    EXPECT_EQ(gpu->points[0].step, 3);
    EXPECT_DOUBLE_EQ(gpu->points[0].value, 5000.0 * 1048576 / 1e6);  // 5242.88 MB
    EXPECT_DOUBLE_EQ(find(all, "memory/device_used_MiB")->points[0].value, 5000.0);
    EXPECT_EQ(all.size(), 3u);  // rank 1 keeps only its own series
    EXPECT_EQ(run_series(tracked).size(), 2u);

    tracked.run.device = "cpu";  // the process's resident memory, not the system's: not named so
    for (const Series& series : mlflow_series(tracked)) {
        EXPECT_EQ(series.name.rfind("system/", 0), std::string::npos) << series.name;
    }
}

TEST(RunParams, DottedKeysWithTheirTypes) {
    RunRecord run;
    run.config_json = R"({"train":{"batch_size":32,"optimizer":"adam"},"eval":{"no_grad":true}})";
    const std::vector<RunParam> params = run_params(run);
    ASSERT_EQ(params.size(), 3u);
    EXPECT_EQ(params[0].key, "eval.no_grad");
    EXPECT_EQ(params[0].flag, true);
    EXPECT_EQ(params[1].key, "train.batch_size");
    EXPECT_EQ(params[1].number, 32.0);
    EXPECT_EQ(params[1].text, "32");
    EXPECT_EQ(params[2].text, "adam");
    EXPECT_FALSE(params[2].number || params[2].flag);
}

TEST(RunStart, ReadsTheStoreTimestamp) {
    RunRecord run;
    run.created_at = "2024-05-01T12:34:56.789Z";
    EXPECT_EQ(run_start_epoch_ms(run), 1714566896789);
    run.created_at = "yesterday";
    EXPECT_EQ(run_start_epoch_ms(run), 0);
}

TEST(FinalValues, BreakdownOnlyWhereRecordedPredictionBeside) {
    RunRecord run;
    run.outcome = RunOutcome(RunStatus::Failed);
    run.outcome.peak_bytes = 4 << 20;
    auto has = [](const auto& values, const std::string& name) {
        for (const auto& [key, value] : values) {
            if (key == name) {
                return true;
            }
        }
        return false;
    };
    EXPECT_TRUE(has(final_values(run), "peak/total_MiB"));
    EXPECT_FALSE(has(final_values(run), "peak/activations_MiB"));  // killed: not recorded
    run.prediction = MemoryPrediction{};
    run.prediction->breakdown.activations = 1 << 20;
    EXPECT_TRUE(has(final_values(run), "predicted/activations_MiB"));
}

TEST(TensorBoardFolder, NamedByIdNameAndIdentity) {
    TrackedRun tracked;
    tracked.run.id = 12;
    tracked.run.name = "bag b32/fp16 ü";
    tracked.uid = "0123456789abcdef0123456789abcdef";
    EXPECT_EQ(tensorboard_run_folder(tracked), "12-bag_b32_fp16___-01234567");
}

}  // namespace
}  // namespace oomlab::trackers
