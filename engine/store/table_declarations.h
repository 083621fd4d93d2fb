// The columns of each table the store writes and reads, declared once (table_columns.h): the
// statements in run_store.cpp, run_queries.cpp and run_details.cpp are made from these, and
// schema_test checks them against the schema's columns.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "oomlab/run/breakdown.h"
#include "oomlab/run/fragmentation.h"
#include "oomlab/run/prediction_check.h"
#include "oomlab/run/run_json.h"
#include "oomlab/store/run_store.h"
#include "table_columns.h"

namespace oomlab::store {

// metrics, besides its id and run_id: written by append_metrics, read by metrics().
inline constexpr Column<MetricRow> kMetricColumns[] = {
    column<&MetricRow::step>("step"),
    column<&MetricRow::phase>("phase"),
    column<&MetricRow::wall_ms>("wall_ms"),
    column<&MetricRow::loss>("loss"),
    column<&MetricRow::accuracy>("accuracy"),
    column<&MetricRow::allocated_bytes>("allocated_bytes"),
    column<&MetricRow::reserved_bytes>("reserved_bytes"),
    column<&MetricRow::peak_bytes>("peak_bytes"),
    column<&MetricRow::device_used_bytes>("device_used_bytes"),
    column<&MetricRow::device_total_bytes>("device_total_bytes"),
    column<&MetricRow::alloc_retries>("alloc_retries"),
    column<&MetricRow::oom_count>("oom_count"),
    column<&MetricRow::samples_per_s>("samples_per_s"),
    column<&MetricRow::rank>("rank"),
};

// events, besides its id, run_id and created_at.
inline constexpr Column<EventRow> kEventColumns[] = {
    column<&EventRow::step>("step"),
    column<&EventRow::kind>("kind"),
    column<&EventRow::message>("message"),
};

// runs: what create_run writes from a NewRun (the rest of its first row is the store's own:
// status, created_at, the owner, the uid). An empty prediction is stored as NULL.
inline constexpr Column<NewRun> kNewRunColumns[] = {
    column<&NewRun::name>("name"),
    column<&NewRun::config_json>("config_json"),
    column<&NewRun::device>("device"),
    column<&NewRun::engine_version>("engine_version"),
    column<&NewRun::torch_version>("torch_version"),
    column<&NewRun::world_size>("world_size"),
    {"prediction_json",
     [](sqlite::Statement& s, int i, const NewRun& run) {
         run.prediction_json.empty() ? s.bind_null(i) : s.bind_text(i, run.prediction_json);
     },
     [](const sqlite::Statement& s, int i, NewRun& run) {
         run.prediction_json = s.column_text(i);
     }},
};

// runs: what a RunRecord reads besides its outcome.
inline constexpr Column<RunRecord> kRunColumns[] = {
    column<&RunRecord::id>("id"),
    column<&RunRecord::name>("name"),
    column<&RunRecord::config_json>("config_json"),
    column<&RunRecord::created_at>("created_at"),
    column<&RunRecord::finished_at>("finished_at"),
    column<&RunRecord::device>("device"),
    column<&RunRecord::engine_version>("engine_version"),
    column<&RunRecord::torch_version>("torch_version"),
    column<&RunRecord::notes>("notes"),
    column<&RunRecord::tags>("tags"),
    column<&RunRecord::world_size>("world_size"),
    {"prediction_json",
     [](sqlite::Statement& s, int i, const RunRecord& run) {
         run.prediction ? s.bind_text(i, prediction_json(*run.prediction)) : s.bind_null(i);
     },
     [](const sqlite::Statement& s, int i, RunRecord& run) {
         run.prediction = parse_prediction_json(s.column_text(i));
     }},
    column<&RunRecord::fixes_json>("fixes_json"),
    column<&RunRecord::fix_of>("fix_of"),
    {"tracker_tags_json",
     [](sqlite::Statement& s, int i, const RunRecord& run) {
         run.tracker_tags.empty() ? s.bind_null(i)
                                  : s.bind_text(i, tracker_tags_json(run.tracker_tags));
     },
     [](const sqlite::Statement& s, int i, RunRecord& run) {
         run.tracker_tags = parse_tracker_tags(s.column_text(i));
     }},
};

namespace declarations_detail {

template <std::size_t I>
constexpr Column<RunOutcome> breakdown_column() {
    return {nullptr,  // named by outcome_columns()
            [](sqlite::Statement& s, int i, const RunOutcome& outcome) {
                s.bind_int(i, breakdown_field(outcome.breakdown, I));
            },
            [](const sqlite::Statement& s, int i, RunOutcome& outcome) {
                breakdown_field(outcome.breakdown, I) = s.column_int(i);
            }};
}

template <std::size_t... I>
std::vector<Column<RunOutcome>> breakdown_columns(std::index_sequence<I...>) {
    static const std::array<std::string, sizeof...(I)> names = {
        ("breakdown_" + std::string(kBreakdownKeys[I]))...};
    std::vector<Column<RunOutcome>> columns = {breakdown_column<I>()...};
    for (std::size_t i = 0; i < columns.size(); ++i) {
        columns[i].name = names[i].c_str();
    }
    return columns;
}

}  // namespace declarations_detail

// runs: how a run ended, written by finish_run and read with the run: the status, the figures,
// then one breakdown_<key> column for each of kBreakdownKeys.
inline const std::vector<Column<RunOutcome>>& outcome_columns() {
    static const std::vector<Column<RunOutcome>> columns = [] {
        std::vector<Column<RunOutcome>> list = {
            {"status",
             [](sqlite::Statement& s, int i, const RunOutcome& outcome) {
                 s.bind_text(i, run_status_name(outcome.status));
             },
             [](const sqlite::Statement& s, int i, RunOutcome& outcome) {
                 // The schema's CHECK constraint admits only known names.
                 outcome.status = parse_run_status(s.column_text(i)).value_or(RunStatus::Failed);
             }},
            column<&RunOutcome::error>("error"),
            column<&RunOutcome::steps>("steps"),
            column<&RunOutcome::final_train_loss>("final_train_loss"),
            column<&RunOutcome::val_accuracy>("val_accuracy"),
            column<&RunOutcome::peak_bytes>("peak_bytes"),
            column<&RunOutcome::wall_seconds>("wall_seconds"),
            column<&RunOutcome::batch_size>("final_batch_size"),
            column<&RunOutcome::accumulation>("final_accumulation"),
        };
        for (const Column<RunOutcome>& c : declarations_detail::breakdown_columns(
                 std::make_index_sequence<kBreakdownKeys.size()>())) {
            list.push_back(c);
        }
        return list;
    }();
    return columns;
}

// runs: the free space at the OOM that ended or adapted the run (rank 0's), NULL without one.
inline constexpr Column<Fragmentation> kFragmentationColumns[] = {
    column<&Fragmentation::requested_bytes>("oom_requested_bytes"),
    column<&Fragmentation::reserved_free_bytes>("oom_reserved_free_bytes"),
    column<&Fragmentation::largest_free_block>("oom_largest_free_block"),
    column<&Fragmentation::free_blocks>("oom_free_blocks"),
    column<&Fragmentation::unreserved_free_bytes>("oom_unreserved_free_bytes"),
};

// module_memory, besides its id and run_id: a module's bytes at the run's peak (phase "peak")
// or its activations at a phase boundary of a sampled step; `rank` the process that measured.
struct ModuleMemoryRow {
    std::int64_t step = 0;
    std::string phase;
    std::int64_t position = 0;
    std::string module;
    std::int64_t parameters = 0;
    std::int64_t gradients = 0;
    std::int64_t optimizer_state = 0;
    std::optional<std::int64_t> activations;
    int rank = 0;
};

inline constexpr Column<ModuleMemoryRow> kModuleMemoryColumns[] = {
    column<&ModuleMemoryRow::step>("step"),
    column<&ModuleMemoryRow::phase>("phase"),
    column<&ModuleMemoryRow::position>("position"),
    column<&ModuleMemoryRow::module>("module"),
    column<&ModuleMemoryRow::parameters>("parameters"),
    column<&ModuleMemoryRow::gradients>("gradients"),
    column<&ModuleMemoryRow::optimizer_state>("optimizer_state"),
    column<&ModuleMemoryRow::activations>("activations"),
    column<&ModuleMemoryRow::rank>("rank"),
};

// memory_stages, besides its id, run_id, position and rank: the staircase.
inline constexpr Column<MemoryStage> kStageColumns[] = {
    column<&MemoryStage::stage>("stage"),
    column<&MemoryStage::allocated_bytes>("allocated_bytes"),
    column<&MemoryStage::device_used_bytes>("device_used_bytes"),
};

}  // namespace oomlab::store
