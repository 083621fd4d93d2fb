// A run's metric rows as a plot can show them, in memory that does not grow with the run: a
// plot a few hundred pixels wide shows at most a few hundred points of a series, so each
// series (a phase of a rank) is cut into about `points` buckets of consecutive rows, and each
// bucket keeps its first and last rows and the rows holding the least and the most of every
// figure. No peak or dip is lost; figures over the whole run come from every row.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "oomlab/run/run_record.h"

namespace oomlab {

struct ThinnedMetrics {
    std::vector<MetricRow> rows;  // in the order they came
    std::size_t rows_read = 0;
    std::optional<double> mean_samples_per_s;  // over every row that has it
};

// Default points per series: more than a plot of 1,000 pixels can show apart.
inline constexpr std::size_t kPlotPointsPerSeries = 1000;

class MetricThinning {
public:
    using Series = std::pair<std::string, int>;  // phase, rank

    // `counts`: how many rows of each series will come (a series not named keeps every row).
    MetricThinning(std::map<Series, std::size_t> counts, std::size_t points);

    void add(const MetricRow& row);
    ThinnedMetrics finish();

private:
    static constexpr std::size_t kFigures = 6;  // loss, accuracy, allocated, reserved, peak, used
    struct Slot {
        bool used = false;
        std::size_t order = 0;
        double value = 0;
        MetricRow row;
    };
    // The bucket being filled: its first row, its last, and the least and most of each figure.
    struct SeriesState {
        std::size_t rows_per_bucket = 1;
        std::size_t in_bucket = 0;
        std::array<Slot, 2 + 2 * kFigures> candidates;
    };
    void close_bucket(SeriesState& series);

    std::map<Series, std::size_t> m_counts;
    std::size_t m_points;
    std::map<Series, SeriesState> m_series;
    std::vector<std::pair<std::size_t, MetricRow>> m_out;
    std::size_t m_order = 0;
    double m_samples_sum = 0;
    std::size_t m_samples_count = 0;
};

// Every row of `rows` through a MetricThinning (for rows already in memory: a live plot).
ThinnedMetrics thin_metrics(const std::vector<MetricRow>& rows,
                            std::size_t points = kPlotPointsPerSeries);

}  // namespace oomlab
