// The memory side of a training run: recovering from an OOM, recording the allocator's state
// when one happens, the snapshot, and the breakdown of the peak.
#include <filesystem>

#include "oomlab/common/errors.h"
#include "oomlab/prepare/data_profile.h"
#include "train/optimizer_factory.h"
#include "train/training_run.h"

namespace oomlab::train {
namespace {

// Splits the micro-batches from `first` on into batches of `size`, keeping their order.
std::vector<std::vector<std::int64_t>> rechunk(const std::vector<std::vector<std::int64_t>>& plan,
                                               std::size_t first, int size) {
    std::vector<std::int64_t> rest;
    for (std::size_t i = first; i < plan.size(); ++i) {
        rest.insert(rest.end(), plan[i].begin(), plan[i].end());
    }
    std::vector<std::vector<std::int64_t>> result;
    for (std::size_t start = 0; start < rest.size(); start += size) {
        result.emplace_back(rest.begin() + start,
                            rest.begin() + std::min(rest.size(), start + size));
    }
    return result;
}

}  // namespace

void TrainingRun::record_oom(const std::string& message) {
    // The failed step's tensors are gone by now; its peak and the allocator's counters remain.
    const memory::MemorySample state = m_memory.sample();
    record_memory_row(m_step + 1, phase::kOom, state);
    std::string text = message + " [" + memory::describe_allocator_state(state) + "]";
    if (const auto requested = requested_bytes_in(message)) {
        m_fragmentation = m_memory.free_space(*requested);
        if (m_fragmentation) {
            text += "; " + describe_fragmentation(*m_fragmentation);
        }
    }
    m_observer.on_event({m_step + 1, std::string(event_kind::kOom), text});
}

void TrainingRun::write_snapshot() {
    if (!m_history) {
        return;
    }
    const std::string& path = m_config.debug.memory_snapshot;
    try {
        check_snapshot_path(m_config);  // named after the run since it was checked first
        memory::write_snapshot_file(m_history->snapshot(), path);
        m_observer.on_event(
            {m_step, std::string(event_kind::kNote),
             "memory snapshot written to " + path + " (open it at pytorch.org/memory_viz)"});
    } catch (const std::exception& error) {
        // The run's results stand; only the snapshot is lost.
        m_observer.on_event({m_step, std::string(event_kind::kNote), error.what()});
    }
    m_history.reset();
}

bool TrainingRun::recover_from_oom(const std::string& message) {
    const OnOom policy = m_config.memory.on_oom;
    const std::string where =
        "out of memory at step " + std::to_string(m_step + 1) + " during " + std::string(m_phase);
    // Release what the failed step held before deciding anything.
    m_batches.reset();
    m_leaked_loss = torch::Tensor();
    for (auto& parameter : m_model->parameters()) {
        parameter.mutable_grad() = torch::Tensor();
    }
    record_oom(where + ": " + message);
    if (policy == OnOom::Stop || m_phase == phase::kEval) {
        throw OutOfMemory(where + ": " + message);
    }
    if (m_batch_size == 1) {
        throw OutOfMemory(where + " with a batch of 1, the smallest there is: " + message);
    }
    const int old_batch = m_batch_size;
    const int old_accumulation = m_accumulation;
    m_batch_size = std::max(1, m_batch_size / 2);
    if (policy == OnOom::Adapt) {
        m_accumulation *= 2;
    }
    m_plan = rechunk(m_plan, m_cursor, m_batch_size);
    m_cursor = 0;
    const std::string action =
        policy == OnOom::Adapt
            ? "micro-batch " + std::to_string(old_batch) + " -> " + std::to_string(m_batch_size) +
                  ", accumulation " + std::to_string(old_accumulation) + " -> " +
                  std::to_string(m_accumulation) + " (same effective batch)"
            : "batch " + std::to_string(old_batch) + " -> " + std::to_string(m_batch_size);
    m_observer.on_event(
        {m_step + 1, std::string(policy == OnOom::Adapt ? event_kind::kAdapt : event_kind::kHalve),
         "retrying the step with " + action});
    const std::int64_t remaining_epochs = m_config.train.epochs - m_epoch;
    if (m_config.train.max_steps == 0) {
        m_total_steps =
            m_step +
            static_cast<std::int64_t>((m_plan.size() + m_accumulation - 1) / m_accumulation) +
            remaining_epochs *
                steps_per_epoch(m_experiment.train_examples.size(), m_batch_size, m_accumulation);
    }
    return true;
}

MemoryBreakdown TrainingRun::measure_breakdown() const {
    MemoryBreakdown breakdown;
    if (!m_model) {
        return breakdown;
    }
    const torch::Tensor& table = m_model->embeddings()->weight();
    for (const auto& parameter : m_model->parameters()) {
        const auto bytes = static_cast<std::int64_t>(parameter.nbytes());
        if (parameter.is_same(table)) {
            breakdown.embedding_table += bytes;
        } else {
            breakdown.parameters += bytes;
        }
        // Where nothing was measured: gradients exist during every step (dense unless the
        // table's are sparse).
        if (parameter.requires_grad() &&
            !(parameter.is_same(table) && m_config.embeddings.sparse_grad)) {
            breakdown.gradients += bytes;
        }
    }
    breakdown.optimizer_state = m_optimizer ? optimizer_state_bytes(*m_optimizer) : 0;
    if (const std::optional<memory::ModuleLedger> ledger = m_memory.ledger_at_peak()) {
        // What was held at the peak, which may come before the first update created the state
        // or while backward had produced only some of the gradients.
        breakdown.gradients = held_by_all_modules(*ledger, memory::AllocationTag::Gradients);
        breakdown.optimizer_state =
            held_by_all_modules(*ledger, memory::AllocationTag::OptimizerState);
    }
    breakdown.data = (m_resident ? m_resident->bytes() : 0) + m_largest_batch_bytes;
    const std::int64_t resident = breakdown.embedding_table + breakdown.parameters +
                                  breakdown.gradients + breakdown.optimizer_state + breakdown.data;
    breakdown.activations = std::max<std::int64_t>(0, m_memory.run_peak() - resident);
    // Cache and the rest of the device as seen at the end of the step that peaked.
    breakdown.allocator_cache = std::max<std::int64_t>(0, m_at_peak.reserved - m_at_peak.allocated);
    if (m_at_peak.device_used) {
        breakdown.other = std::max<std::int64_t>(0, *m_at_peak.device_used - m_at_peak.reserved);
    }
    return breakdown;
}

}  // namespace oomlab::train
