// Where a run's bytes came from: by module, the staircase, the free space at an OOM.
#include <algorithm>

#include "oomlab/store/run_store.h"
#include "run_store_impl.h"

namespace oomlab {
namespace {

// module_memory.phase of the rows measured at the run's peak.
constexpr std::string_view kPeakPhase = "peak";

const std::string& select_modules() {
    static const std::string sql =
        "SELECT " + store::column_list(store::kModuleMemoryColumns) + " FROM module_memory ";
    return sql;
}

}  // namespace

void RunStore::Impl::write_details(std::int64_t run_id, const RunOutcome& outcome, int rank) {
    sqlite::Transaction transaction(database);
    for (const char* table : {"module_memory", "memory_stages"}) {
        database.prepare(std::string("DELETE FROM ") + table + " WHERE run_id = ?1 AND rank = ?2")
            .bind_int(1, run_id)
            .bind_int(2, rank)
            .run();
    }
    auto insert_module =
        database.prepare(store::insert_sql("module_memory", store::kModuleMemoryColumns, "run_id"));
    insert_module.bind_int(1, run_id);
    std::int64_t position = 0;
    const auto insert = [&](const store::ModuleMemoryRow& row) {
        store::bind_row(insert_module, store::kModuleMemoryColumns, row, 2);
        insert_module.run();
    };
    for (const ModuleMemory& module : outcome.by_module) {
        insert({outcome.steps, std::string(kPeakPhase), position++, module.module,
                module.parameters, module.gradients, module.optimizer_state, module.activations,
                rank});
    }
    for (const ModuleSample& sample : outcome.module_samples) {
        insert({sample.step, sample.phase, position++, sample.module, 0, 0, 0, sample.activations,
                rank});
    }
    auto insert_stage =
        database.prepare("INSERT INTO memory_stages (run_id, rank, position, " +
                         store::column_list(store::kStageColumns) + ") VALUES (?1, ?2, ?3, " +
                         store::parameter_list(store::kStageColumns, 4) + ")");
    insert_stage.bind_int(1, run_id).bind_int(2, rank);
    position = 0;
    for (const MemoryStage& stage : outcome.staircase) {
        insert_stage.bind_int(3, position++);
        store::bind_row(insert_stage, store::kStageColumns, stage, 4);
        insert_stage.run();
    }
    database
        .prepare(
            "INSERT OR REPLACE INTO rank_outcomes (run_id, rank, status, steps, peak_bytes) "
            "VALUES (?1, ?2, ?3, ?4, ?5)")
        .bind_int(1, run_id)
        .bind_int(2, rank)
        .bind_text(3, run_status_name(outcome.status))
        .bind_int(4, outcome.steps)
        .bind_int(5, outcome.peak_bytes)
        .run();
    // A run of several processes peaks where its highest rank does: whichever of rank 0's
    // ending and the others' is written last sets it.
    database
        .prepare(
            "UPDATE runs SET peak_bytes = max(peak_bytes, (SELECT max(peak_bytes) FROM "
            "rank_outcomes WHERE run_id = ?1)) WHERE id = ?1")
        .bind_int(1, run_id)
        .run();
    if (outcome.fragmentation && rank == 0) {
        const auto& columns = store::kFragmentationColumns;
        auto update = database.prepare("UPDATE runs SET " + store::assignment_list(columns, 2) +
                                       " WHERE id = ?1");
        update.bind_int(1, run_id);
        store::bind_row(update, columns, *outcome.fragmentation, 2);
        update.run();
    }
    transaction.commit();
}

void RunStore::Impl::read_details(RunRecord& run) const {
    auto modules = database.prepare(
        select_modules() + "WHERE run_id = ?1 AND phase = ?2 AND rank = 0 ORDER BY position");
    modules.bind_int(1, run.id).bind_text(2, kPeakPhase);
    while (modules.step()) {
        store::ModuleMemoryRow row;
        store::read_row(modules, store::kModuleMemoryColumns, row, 0);
        run.outcome.by_module.push_back(
            {row.module, row.parameters, row.gradients, row.optimizer_state, row.activations});
    }
    auto stages = database.prepare("SELECT " + store::column_list(store::kStageColumns) +
                                   " FROM memory_stages WHERE run_id = ?1 AND rank = 0 "
                                   "ORDER BY position");
    stages.bind_int(1, run.id);
    while (stages.step()) {
        store::read_row(stages, store::kStageColumns, run.outcome.staircase.emplace_back(), 0);
    }
    if (run.world_size > 1) {
        read_ranks(run);
    }
    auto free_space = database.prepare(
        "SELECT " + store::column_list(store::kFragmentationColumns) +
        " FROM runs WHERE id = ?1 AND " + store::kFragmentationColumns[0].name + " IS NOT NULL");
    free_space.bind_int(1, run.id);
    if (free_space.step()) {
        store::read_row(free_space, store::kFragmentationColumns,
                        run.outcome.fragmentation.emplace(), 0);
    }
}

void RunStore::Impl::read_ranks(RunRecord& run) const {
    auto peaks = database.prepare(
        "SELECT rank, MAX(peak_bytes) FROM metrics WHERE run_id = ?1 AND phase = 'step' "
        "GROUP BY rank ORDER BY rank");
    peaks.bind_int(1, run.id);
    while (peaks.step()) {
        RankMemory& rank = run.ranks.emplace_back();
        rank.rank = static_cast<int>(peaks.column_int(0));
        rank.peak_bytes = peaks.column_optional_int(1).value_or(0);
    }
    const auto rank_of = [&](std::int64_t number) -> RankMemory& {
        for (RankMemory& rank : run.ranks) {
            if (rank.rank == number) {
                return rank;
            }
        }
        RankMemory& rank = run.ranks.emplace_back();
        rank.rank = static_cast<int>(number);
        return rank;
    };
    auto endings = database.prepare(
        "SELECT rank, status, steps, peak_bytes FROM rank_outcomes WHERE run_id = ?1");
    endings.bind_int(1, run.id);
    while (endings.step()) {
        RankMemory& rank = rank_of(endings.column_int(0));
        rank.status = parse_run_status(endings.column_text(1)).value_or(RunStatus::Failed);
        rank.steps = endings.column_int(2);
        rank.peak_bytes = std::max(rank.peak_bytes, endings.column_int(3));
    }
    std::sort(run.ranks.begin(), run.ranks.end(),
              [](const RankMemory& a, const RankMemory& b) { return a.rank < b.rank; });
    auto modules = database.prepare(
        "SELECT rank, SUM(parameters), SUM(gradients), SUM(optimizer_state) FROM module_memory "
        "WHERE run_id = ?1 AND phase = ?2 GROUP BY rank");
    modules.bind_int(1, run.id).bind_text(2, kPeakPhase);
    while (modules.step()) {
        for (RankMemory& rank : run.ranks) {
            if (rank.rank == modules.column_int(0)) {
                rank.parameters = modules.column_int(1);
                rank.gradients = modules.column_int(2);
                rank.optimizer_state = modules.column_int(3);
            }
        }
    }
}

std::vector<ModuleSample> RunStore::module_samples(std::int64_t run_id) const {
    auto select = m_impl->database.prepare(
        select_modules() + "WHERE run_id = ?1 AND phase != ?2 AND rank = 0 ORDER BY position");
    select.bind_int(1, run_id).bind_text(2, kPeakPhase);
    std::vector<ModuleSample> samples;
    while (select.step()) {
        store::ModuleMemoryRow row;
        store::read_row(select, store::kModuleMemoryColumns, row, 0);
        samples.push_back({row.step, row.phase, row.module, row.activations.value_or(0)});
    }
    return samples;
}

}  // namespace oomlab
