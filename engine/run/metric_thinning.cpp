#include "oomlab/run/metric_thinning.h"

#include <algorithm>

namespace oomlab {
namespace {

template <typename T>
std::optional<double> as_double(const std::optional<T>& value) {
    return value ? std::optional<double>(double(*value)) : std::nullopt;
}

}  // namespace

MetricThinning::MetricThinning(std::map<Series, std::size_t> counts, std::size_t points)
    : m_counts(std::move(counts)), m_points(std::max<std::size_t>(points, 1)) {}

void MetricThinning::add(const MetricRow& row) {
    const std::size_t order = m_order++;
    if (row.samples_per_s) {
        m_samples_sum += *row.samples_per_s;
        ++m_samples_count;
    }
    const Series key{row.phase, row.rank};
    auto [at, added] = m_series.try_emplace(key);
    SeriesState& series = at->second;
    if (added) {
        const auto count = m_counts.find(key);
        series.rows_per_bucket =
            count == m_counts.end() ? 1 : std::max<std::size_t>(1, count->second / m_points);
    }
    const auto keep = [&](Slot& slot, double value) {
        slot.used = true;
        slot.order = order;
        slot.value = value;
        slot.row = row;
    };
    if (!series.candidates[0].used) {
        keep(series.candidates[0], 0);
    }
    keep(series.candidates[1], 0);
    const std::optional<double> figures[kFigures] = {row.loss,
                                                     row.accuracy,
                                                     as_double(row.allocated_bytes),
                                                     as_double(row.reserved_bytes),
                                                     as_double(row.peak_bytes),
                                                     as_double(row.device_used_bytes)};
    for (std::size_t f = 0; f < kFigures; ++f) {
        if (!figures[f]) {
            continue;
        }
        Slot& least = series.candidates[2 + 2 * f];
        Slot& most = series.candidates[3 + 2 * f];
        if (!least.used || *figures[f] < least.value) {
            keep(least, *figures[f]);
        }
        if (!most.used || *figures[f] > most.value) {
            keep(most, *figures[f]);
        }
    }
    if (++series.in_bucket == series.rows_per_bucket) {
        close_bucket(series);
    }
}

void MetricThinning::close_bucket(SeriesState& series) {
    std::vector<Slot*> kept;
    for (Slot& slot : series.candidates) {
        if (slot.used) {
            kept.push_back(&slot);
        }
    }
    std::sort(kept.begin(), kept.end(),
              [](const Slot* a, const Slot* b) { return a->order < b->order; });
    for (std::size_t i = 0; i < kept.size(); ++i) {
        if (i == 0 || kept[i]->order != kept[i - 1]->order) {
            m_out.emplace_back(kept[i]->order, std::move(kept[i]->row));
        }
    }
    for (Slot& slot : series.candidates) {
        slot.used = false;
    }
    series.in_bucket = 0;
}

ThinnedMetrics MetricThinning::finish() {
    for (auto& [key, series] : m_series) {
        if (series.in_bucket > 0) {
            close_bucket(series);
        }
    }
    std::sort(m_out.begin(), m_out.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    ThinnedMetrics thinned;
    thinned.rows.reserve(m_out.size());
    for (auto& [order, row] : m_out) {
        thinned.rows.push_back(std::move(row));
    }
    thinned.rows_read = m_order;
    if (m_samples_count > 0) {
        thinned.mean_samples_per_s = m_samples_sum / double(m_samples_count);
    }
    m_out.clear();
    return thinned;
}

ThinnedMetrics thin_metrics(const std::vector<MetricRow>& rows, std::size_t points) {
    std::map<MetricThinning::Series, std::size_t> counts;
    for (const MetricRow& row : rows) {
        ++counts[{row.phase, row.rank}];
    }
    MetricThinning thinning(std::move(counts), points);
    for (const MetricRow& row : rows) {
        thinning.add(row);
    }
    return thinning.finish();
}

}  // namespace oomlab
