// A long run's rows as a plot shows them: a bounded number per series, with every bucket's
// extremes, so a single spike or dip among 200,000 rows is still drawn.
#include "oomlab/run/metric_thinning.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace oomlab {
namespace {

MetricRow train_row(std::int64_t step, double loss, std::int64_t allocated) {
    MetricRow row;
    row.step = step;
    row.phase = "step";
    row.loss = loss;
    row.allocated_bytes = allocated;
    row.peak_bytes = allocated + 100;
    row.samples_per_s = 10.0 + double(step % 2);  // 10 and 11: a mean of 10.5
    return row;
}

TEST(MetricThinning, KeepsEveryBucketsExtremesInBoundedRows) {
    constexpr std::int64_t kRows = 200000;
    constexpr std::int64_t kSpike = 123457;
    constexpr std::int64_t kDip = 77777;
    std::vector<MetricRow> rows;
    for (std::int64_t step = 1; step <= kRows; ++step) {
        const std::int64_t sawtooth = 1000 + (step % 64) * 10;
        rows.push_back(train_row(step, step == kDip ? 0.001 : 2.0 - double(step) / kRows,
                                 step == kSpike ? 50000 : sawtooth));
        if (step % 2000 == 0) {  // 100 validation rows: all of them kept
            MetricRow validation;
            validation.step = step;
            validation.phase = "validation";
            validation.accuracy = double(step) / kRows;
            rows.push_back(validation);
        }
    }
    const ThinnedMetrics thinned = thin_metrics(rows, 500);
    EXPECT_EQ(thinned.rows_read, rows.size());
    ASSERT_TRUE(thinned.mean_samples_per_s);
    EXPECT_DOUBLE_EQ(*thinned.mean_samples_per_s, 10.5);
    const auto train = std::count_if(thinned.rows.begin(), thinned.rows.end(),
                                     [](const MetricRow& row) { return row.phase == "step"; });
    // 500 buckets of 400 rows; each keeps at most its first, last and the extremes of 3 figures.
    EXPECT_LE(train, 500 * 8);
    EXPECT_GE(train, 500 * 2);
    const auto validation =
        std::count_if(thinned.rows.begin(), thinned.rows.end(),
                      [](const MetricRow& row) { return row.phase == "validation"; });
    EXPECT_EQ(validation, 100) << "a short series keeps every row";
    const auto has_step = [&](std::int64_t step) {
        return std::any_of(thinned.rows.begin(), thinned.rows.end(), [&](const MetricRow& row) {
            return row.phase == "step" && row.step == step;
        });
    };
    EXPECT_TRUE(has_step(kSpike)) << "the peak";
    EXPECT_TRUE(has_step(kDip)) << "the lowest loss";
    EXPECT_TRUE(has_step(1));
    EXPECT_TRUE(has_step(kRows)) << "the last row: the final loss";
    // The sawtooth's top and bottom are in every bucket's rows.
    std::int64_t most = 0;
    for (const MetricRow& row : thinned.rows) {
        most = std::max(most, row.allocated_bytes.value_or(0));
    }
    EXPECT_EQ(most, 50000);
    EXPECT_TRUE(
        std::is_sorted(thinned.rows.begin(), thinned.rows.end(),
                       [](const MetricRow& a, const MetricRow& b) { return a.step < b.step; }));
}

TEST(MetricThinning, AShortRunKeepsEveryRow) {
    std::vector<MetricRow> rows;
    for (std::int64_t step = 1; step <= 300; ++step) {
        rows.push_back(train_row(step, 1.0, step));
    }
    const ThinnedMetrics thinned = thin_metrics(rows);
    ASSERT_EQ(thinned.rows.size(), rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        EXPECT_EQ(thinned.rows[i].step, rows[i].step);
    }
}

}  // namespace
}  // namespace oomlab
