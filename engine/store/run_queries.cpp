// Reading runs, metrics and events back.
#include <iterator>
#include <string>

#include "oomlab/run/prediction_check.h"
#include "oomlab/store/run_store.h"
#include "store/run_store_impl.h"

namespace oomlab {
namespace {

// Column order read_run() expects; the breakdown columns follow, in kBreakdownKeys order.
constexpr const char* kRunColumns =
    "id, name, status, config_json, created_at, finished_at, device, engine_version, "
    "torch_version, error, notes, steps, final_train_loss, val_accuracy, peak_bytes, "
    "wall_seconds, world_size, final_batch_size, final_accumulation, tags, prediction_json";
constexpr int kFirstBreakdownColumn = 21;

const std::string& select_runs() {
    static const std::string sql = [] {
        std::string text = std::string("SELECT ") + kRunColumns;
        for (std::size_t i = 0; i < kBreakdownKeys.size(); ++i) {
            text += ", " + store::breakdown_column(i);
        }
        return text + " FROM runs";
    }();
    return sql;
}

RunRecord read_run(const sqlite::Statement& row) {
    RunRecord run;
    run.id = row.column_int(0);
    run.name = row.column_text(1);
    // The schema's CHECK constraint admits only known names.
    run.outcome.status = parse_run_status(row.column_text(2)).value_or(RunStatus::Failed);
    run.config_json = row.column_text(3);
    run.created_at = row.column_text(4);
    run.finished_at = row.column_text(5);
    run.device = row.column_text(6);
    run.engine_version = row.column_text(7);
    run.torch_version = row.column_text(8);
    run.outcome.error = row.column_text(9);
    run.notes = row.column_text(10);
    run.outcome.steps = row.column_int(11);
    run.outcome.final_train_loss = row.column_optional_real(12);
    run.outcome.val_accuracy = row.column_optional_real(13);
    run.outcome.peak_bytes = row.column_int(14);
    run.outcome.wall_seconds = row.column_real(15);
    run.world_size = static_cast<int>(row.column_int(16));
    run.outcome.batch_size = static_cast<int>(row.column_int(17));
    run.outcome.accumulation = static_cast<int>(row.column_int(18));
    run.tags = row.column_text(19);
    run.prediction = parse_prediction_json(row.column_text(20));
    for (std::size_t i = 0; i < kBreakdownKeys.size(); ++i) {
        breakdown_field(run.outcome.breakdown, i) =
            row.column_int(kFirstBreakdownColumn + static_cast<int>(i));
    }
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
        "SELECT " + store::column_list(kMetricColumns) + ", id FROM metrics ";
    return sql;
}

// The rows of a select_metrics(); `last_id` becomes the last row's id.
std::vector<MetricRow> read_metric_rows(sqlite::Statement& select, std::int64_t& last_id) {
    constexpr int kIdColumn = static_cast<int>(std::size(kMetricColumns));
    std::vector<MetricRow> rows;
    while (select.step()) {
        rows.push_back(store::read_row(select, kMetricColumns));
        last_id = select.column_int(kIdColumn);
    }
    return rows;
}

std::vector<EventRow> read_event_rows(sqlite::Statement& select, std::int64_t& last_id) {
    std::vector<EventRow> rows;
    while (select.step()) {
        rows.push_back(
            EventRow{select.column_int(0), select.column_text(1), select.column_text(2)});
        last_id = select.column_int(3);
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

std::vector<MetricRow> RunStore::metrics_after(std::int64_t run_id, std::int64_t& last_id) const {
    auto select =
        m_impl->database.prepare(select_metrics() + "WHERE run_id = ?1 AND id > ?2 ORDER BY id");
    select.bind_int(1, run_id).bind_int(2, last_id);
    return read_metric_rows(select, last_id);
}

std::vector<EventRow> RunStore::events(std::int64_t run_id) const {
    auto select = m_impl->database.prepare(
        "SELECT step, kind, message, id FROM events WHERE run_id = ?1 ORDER BY step, id");
    select.bind_int(1, run_id);
    std::int64_t last_id = 0;
    return read_event_rows(select, last_id);
}

std::vector<EventRow> RunStore::events_after(std::int64_t run_id, std::int64_t& last_id) const {
    auto select = m_impl->database.prepare(
        "SELECT step, kind, message, id FROM events WHERE run_id = ?1 AND id > ?2 ORDER BY id");
    select.bind_int(1, run_id).bind_int(2, last_id);
    return read_event_rows(select, last_id);
}

}  // namespace oomlab
