// Reading runs, metrics and events back.
#include <iterator>
#include <map>
#include <string>

#include "oomlab/store/run_store.h"
#include "run_store_impl.h"

namespace oomlab {
namespace {

const std::string& select_runs() {
    static const std::string sql = "SELECT " + store::column_list(store::kRunColumns) + ", " +
                                   store::column_list(store::outcome_columns()) + " FROM runs";
    return sql;
}

RunRecord read_run(const sqlite::Statement& row) {
    RunRecord run;
    store::read_row(row, store::kRunColumns, run, 0);
    store::read_row(row, store::outcome_columns(), run.outcome,
                    static_cast<int>(std::size(store::kRunColumns)));
    return run;
}

// name_contains matches literally: LIKE's wildcards in it are escaped.
std::string like_pattern(const std::string& text) {
    std::string pattern = "%";
    for (char c : text) {
        if (c == '%' || c == '_' || c == '\\') {
            pattern += '\\';
        }
        pattern += c;
    }
    return pattern + "%";
}

}  // namespace

std::vector<RunRecord> RunStore::list_runs(const RunFilter& filter) const {
    // Ids grow with creation time, so id order is newest first without a sort on text.
    auto select = m_impl->database.prepare(
        select_runs() +
        " WHERE (?1 IS NULL OR status = ?1) AND (?2 IS NULL OR name LIKE ?2 ESCAPE '\\')"
        " ORDER BY id DESC LIMIT ?3");
    if (filter.status) {
        select.bind_text(1, run_status_name(*filter.status));
    }
    if (!filter.name_contains.empty()) {
        select.bind_text(2, like_pattern(filter.name_contains));
    }
    select.bind_int(3, filter.limit > 0 ? filter.limit : -1);  // LIMIT -1: no limit

    std::vector<RunRecord> runs;
    while (select.step()) {
        runs.push_back(read_run(select));
    }
    return runs;
}

std::vector<RunRecord> RunStore::fix_runs_of(std::int64_t run_id) const {
    auto select = m_impl->database.prepare(select_runs() + " WHERE fix_of = ?1 ORDER BY id");
    select.bind_int(1, run_id);
    std::vector<RunRecord> runs;
    while (select.step()) {
        runs.push_back(read_run(select));
    }
    return runs;
}

std::optional<RunRecord> RunStore::find_run(std::int64_t run_id) const {
    auto select = m_impl->database.prepare(select_runs() + " WHERE id = ?1");
    select.bind_int(1, run_id);
    if (!select.step()) {
        return std::nullopt;
    }
    RunRecord run = read_run(select);
    m_impl->read_details(run);
    return run;
}

namespace {

const std::string& select_metrics() {
    static const std::string sql =
        "SELECT " + store::column_list(store::kMetricColumns) + ", id FROM metrics ";
    return sql;
}

// The rows of a select_metrics(); `last_id` becomes the last row's id.
std::vector<MetricRow> read_metric_rows(sqlite::Statement& select, std::int64_t& last_id) {
    constexpr int kIdColumn = static_cast<int>(std::size(store::kMetricColumns));
    std::vector<MetricRow> rows;
    while (select.step()) {
        store::read_row(select, store::kMetricColumns, rows.emplace_back(), 0);
        last_id = select.column_int(kIdColumn);
    }
    return rows;
}

const std::string& select_events() {
    static const std::string sql =
        "SELECT " + store::column_list(store::kEventColumns) + ", id FROM events ";
    return sql;
}

std::vector<EventRow> read_event_rows(sqlite::Statement& select, std::int64_t& last_id) {
    constexpr int kIdColumn = static_cast<int>(std::size(store::kEventColumns));
    std::vector<EventRow> rows;
    while (select.step()) {
        store::read_row(select, store::kEventColumns, rows.emplace_back(), 0);
        last_id = select.column_int(kIdColumn);
    }
    return rows;
}

}  // namespace

std::vector<MetricRow> RunStore::metrics(std::int64_t run_id) const {
    auto select =
        m_impl->database.prepare(select_metrics() + "WHERE run_id = ?1 ORDER BY step, id");
    select.bind_int(1, run_id);
    std::int64_t last_id = 0;
    return read_metric_rows(select, last_id);
}

ThinnedMetrics RunStore::thinned_metrics(std::int64_t run_id, std::size_t points) const {
    std::map<MetricThinning::Series, std::size_t> counts;
    auto count = m_impl->database.prepare(
        "SELECT phase, rank, COUNT(*) FROM metrics WHERE run_id = ?1 GROUP BY phase, rank");
    count.bind_int(1, run_id);
    while (count.step()) {
        counts[{count.column_text(0), int(count.column_int(1))}] = std::size_t(count.column_int(2));
    }
    MetricThinning thinning(std::move(counts), points);
    auto select =
        m_impl->database.prepare(select_metrics() + "WHERE run_id = ?1 ORDER BY step, id");
    select.bind_int(1, run_id);
    while (select.step()) {
        MetricRow row;
        store::read_row(select, store::kMetricColumns, row, 0);
        thinning.add(row);
    }
    return thinning.finish();
}

std::vector<MetricRow> RunStore::metrics_after(std::int64_t run_id, std::int64_t& last_id) const {
    auto select =
        m_impl->database.prepare(select_metrics() + "WHERE run_id = ?1 AND id > ?2 ORDER BY id");
    select.bind_int(1, run_id).bind_int(2, last_id);
    return read_metric_rows(select, last_id);
}

std::vector<EventRow> RunStore::events(std::int64_t run_id) const {
    auto select = m_impl->database.prepare(select_events() + "WHERE run_id = ?1 ORDER BY step, id");
    select.bind_int(1, run_id);
    std::int64_t last_id = 0;
    return read_event_rows(select, last_id);
}

std::vector<EventRow> RunStore::events_after(std::int64_t run_id, std::int64_t& last_id) const {
    auto select =
        m_impl->database.prepare(select_events() + "WHERE run_id = ?1 AND id > ?2 ORDER BY id");
    select.bind_int(1, run_id).bind_int(2, last_id);
    return read_event_rows(select, last_id);
}

}  // namespace oomlab
