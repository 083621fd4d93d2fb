// RunStore::add_whole_run: a run made elsewhere, written at once.
#include "oomlab/common/errors.h"
#include "oomlab/common/utf8.h"
#include "oomlab/run/prediction_check.h"
#include "oomlab/run/run_json.h"
#include "oomlab/store/run_store.h"
#include "run_store_impl.h"

namespace oomlab {

std::int64_t RunStore::add_whole_run(const WholeRun& whole) {
    const RunRecord& run = whole.run;
    require_one_line(run.name, "run name");
    require_one_line(run.tags, "run tags");
    require_utf8(run.notes, "run notes");
    if (whole.uid.empty()) {
        throw BadInput("a run without an identity (uid) cannot be added to " + path() +
                       ": it could not be told apart from a copy of itself");
    }
    if (const auto here = run_with_uid(whole.uid)) {
        throw BadInput(path() + " holds run " + whole.uid + " already (as run " +
                       std::to_string(*here) + ")");
    }
    if (run.outcome.status == RunStatus::Running) {
        throw BadInput("run " + whole.uid + " is still training: add it once it has ended");
    }
    const NewRun row{run.name,
                     run.config_json,
                     run.device,
                     run.engine_version,
                     run.torch_version,
                     run.world_size,
                     run.prediction ? prediction_json(*run.prediction) : std::string()};
    const auto& outcome_columns = store::outcome_columns();
    const int id_parameter = int(outcome_columns.size()) + 1;
    sqlite::Database& database = m_impl->database;
    std::int64_t run_id = 0;
    m_impl->user_write([&] {
        store::retry_while_busy(store::kFinishTimeoutMs, [&] {
            sqlite::Transaction transaction(database);
            auto insert = database.prepare(
                "INSERT INTO runs (status, created_at, finished_at, uid, tags, notes, "
                "fixes_json, tracker_tags_json, " +
                store::column_list(store::kNewRunColumns) +
                ") VALUES ('running', ?1, ?2, ?3, ?4, ?5, ?6, ?7, " +
                store::parameter_list(store::kNewRunColumns, 8) + ")");
            insert.bind_text(1, run.created_at)
                .bind_text(2, run.finished_at)
                .bind_text(3, whole.uid)
                .bind_text(4, run.tags)
                .bind_text(5, run.notes);
            run.fixes_json.empty() ? insert.bind_null(6) : insert.bind_text(6, run.fixes_json);
            run.tracker_tags.empty() ? insert.bind_null(7)
                                     : insert.bind_text(7, tracker_tags_json(run.tracker_tags));
            store::bind_row(insert, store::kNewRunColumns, row, 8);
            insert.run();
            run_id = database.last_insert_id();

            auto ending =
                database.prepare("UPDATE runs SET " + store::assignment_list(outcome_columns, 1) +
                                 " WHERE id = ?" + std::to_string(id_parameter));
            store::bind_row(ending, outcome_columns, run.outcome, 1);
            ending.bind_int(id_parameter, run_id).run();

            for (const MetricRow& metric : whole.metrics) {
                m_impl->insert_metric.bind_int(1, run_id);
                store::bind_row(m_impl->insert_metric, store::kMetricColumns, metric, 2);
                m_impl->insert_metric.run();
            }
            auto event = m_impl->prepare_insert_event();
            event.bind_int(1, run_id).bind_text(2, run.finished_at);
            for (const EventRow& one : whole.events) {
                store::bind_row(event, store::kEventColumns, one, 3);
                event.run();
            }
            m_impl->write_details(run_id, run.outcome, /*rank=*/0);
            transaction.commit();
        });
    });
    return run_id;
}

}  // namespace oomlab
