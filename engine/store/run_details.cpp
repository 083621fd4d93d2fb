// Where a run's bytes came from: by module, the staircase, the free space at an OOM.
#include <algorithm>

#include "oomlab/store/run_store.h"
#include "store/run_store_impl.h"

namespace oomlab {
namespace {

// module_memory.phase of the rows measured at the run's peak.
constexpr std::string_view kPeakPhase = "peak";

}  // namespace

void RunStore::Impl::write_details(std::int64_t run_id, const RunOutcome& outcome, int rank) {
    sqlite::Transaction transaction(database);
    for (const char* table : {"module_memory", "memory_stages"}) {
        database.prepare(std::string("DELETE FROM ") + table + " WHERE run_id = ?1 AND rank = ?2")
            .bind_int(1, run_id)
            .bind_int(2, rank)
            .run();
    }
    auto insert_module = database.prepare(
        "INSERT INTO module_memory (run_id, step, phase, position, module, parameters, "
        "gradients, optimizer_state, activations, rank) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
    insert_module.bind_int(10, rank);
    int position = 0;
    for (const ModuleMemory& module : outcome.by_module) {
        insert_module.bind_int(1, run_id)
            .bind_int(2, outcome.steps)
            .bind_text(3, kPeakPhase)
            .bind_int(4, position++)
            .bind_text(5, module.module)
            .bind_int(6, module.parameters)
            .bind_int(7, module.gradients)
            .bind_int(8, module.optimizer_state)
            .bind_optional(9, module.activations)
            .run();
    }
    for (const ModuleSample& sample : outcome.module_samples) {
        insert_module.bind_int(1, run_id)
            .bind_int(2, sample.step)
            .bind_text(3, sample.phase)
            .bind_int(4, position++)
            .bind_text(5, sample.module)
            .bind_int(6, 0)
            .bind_int(7, 0)
            .bind_int(8, 0)
            .bind_int(9, sample.activations)
            .run();
    }
    auto insert_stage = database.prepare(
        "INSERT INTO memory_stages (run_id, position, stage, allocated_bytes, "
        "device_used_bytes, rank) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    insert_stage.bind_int(6, rank);
    position = 0;
    for (const MemoryStage& stage : outcome.staircase) {
        insert_stage.bind_int(1, run_id)
            .bind_int(2, position++)
            .bind_text(3, stage.stage)
            .bind_int(4, stage.allocated_bytes)
            .bind_optional(5, stage.device_used_bytes)
            .run();
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
    if (const auto& f = outcome.fragmentation; f && rank == 0) {
        database
            .prepare(
                "UPDATE runs SET oom_requested_bytes = ?1, oom_reserved_free_bytes = ?2, "
                "oom_largest_free_block = ?3, oom_free_blocks = ?4, "
                "oom_unreserved_free_bytes = ?5 WHERE id = ?6")
            .bind_int(1, f->requested_bytes)
            .bind_int(2, f->reserved_free_bytes)
            .bind_int(3, f->largest_free_block)
            .bind_int(4, f->free_blocks)
            .bind_int(5, f->unreserved_free_bytes)
            .bind_int(6, run_id)
            .run();
    }
    transaction.commit();
}

void RunStore::Impl::read_details(RunRecord& run) const {
    auto modules = database.prepare(
        "SELECT module, parameters, gradients, optimizer_state, activations FROM module_memory "
        "WHERE run_id = ?1 AND phase = ?2 AND rank = 0 ORDER BY position");
    modules.bind_int(1, run.id).bind_text(2, kPeakPhase);
    while (modules.step()) {
        run.outcome.by_module.push_back({modules.column_text(0), modules.column_int(1),
                                         modules.column_int(2), modules.column_int(3),
                                         modules.column_optional_int(4)});
    }
    auto stages = database.prepare(
        "SELECT stage, allocated_bytes, device_used_bytes FROM memory_stages "
        "WHERE run_id = ?1 AND rank = 0 ORDER BY position");
    stages.bind_int(1, run.id);
    while (stages.step()) {
        run.outcome.staircase.push_back(
            {stages.column_text(0), stages.column_int(1), stages.column_optional_int(2)});
    }
    if (run.world_size > 1) {
        read_ranks(run);
    }
    auto free_space = database.prepare(
        "SELECT oom_requested_bytes, oom_reserved_free_bytes, oom_largest_free_block, "
        "oom_free_blocks, oom_unreserved_free_bytes FROM runs "
        "WHERE id = ?1 AND oom_requested_bytes IS NOT NULL");
    free_space.bind_int(1, run.id);
    if (free_space.step()) {
        run.outcome.fragmentation = Fragmentation{
            free_space.column_int(0), free_space.column_int(1), free_space.column_int(2),
            free_space.column_int(3), free_space.column_int(4)};
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
        "SELECT step, phase, module, activations FROM module_memory "
        "WHERE run_id = ?1 AND phase != ?2 AND rank = 0 ORDER BY position");
    select.bind_int(1, run_id).bind_text(2, kPeakPhase);
    std::vector<ModuleSample> samples;
    while (select.step()) {
        samples.push_back({select.column_int(0), select.column_text(1), select.column_text(2),
                           select.column_optional_int(3).value_or(0)});
    }
    return samples;
}

}  // namespace oomlab
