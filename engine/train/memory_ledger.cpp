#include "memory_ledger.h"

#include <algorithm>

#include "module_attribution.h"
#include "oomlab/config/config_io.h"
#include "oomlab/run/fragmentation.h"
#include "optimizer_factory.h"
#include "prepared_experiment.h"

namespace oomlab::train {

MemoryLedger::MemoryLedger(const c10::Device& device, std::int64_t cap_bytes,
                           const std::string& alloc_conf)
    : m_device(device.type()), m_monitor(device, cap_bytes, alloc_conf), m_alloc_conf(alloc_conf) {}

void MemoryLedger::start_history(const c10::Device& device) {
    m_history = std::make_unique<memory::MemoryHistory>(device);
}

void MemoryLedger::add_stage(std::string_view stage) {
    const memory::MemorySample now = m_monitor.sample();
    m_staircase.push_back({std::string(stage), now.allocated, now.device_used});
}

memory::MemorySample MemoryLedger::end_step(std::int64_t step) {
    const memory::MemorySample memory = m_monitor.sample();
    if (memory.step_peak >= m_at_peak.step_peak) {
        m_at_peak = memory;
    }
    if (step == 1) {
        // Gradients are gone by now; the state the first update created stays.
        m_staircase.push_back(
            {std::string(stage::kOptimizerState), memory.allocated, memory.device_used});
        m_staircase.push_back(
            {std::string(stage::kFirstPeak), memory.step_peak, memory.device_used});
    }
    m_last_step = memory;
    return memory;
}

std::string MemoryLedger::describe_oom(const std::string& message,
                                       const memory::MemorySample& state) {
    std::string text = message + " [" + memory::describe_allocator_state(state) + "]";
    if (const auto requested = requested_bytes_in(message)) {
        m_fragmentation = m_monitor.free_space(*requested);
        if (m_fragmentation) {
            text += "; " + describe_fragmentation(*m_fragmentation, m_alloc_conf);
        }
    }
    return text;
}

void MemoryLedger::write_snapshot(const ExperimentConfig& config, TrainObserver& observer,
                                  std::int64_t step) {
    if (!m_history) {
        return;
    }
    const std::string& path = config.debug.memory_snapshot;
    try {
        check_snapshot_path(config);  // named after the run since it was checked first
        memory::MemorySnapshot snapshot = m_history->snapshot();
        snapshot.experiment_json = config_to_json(config, /*indent=*/-1);
        memory::write_snapshot_file(snapshot, path);
        observer.on_event(
            {step, std::string(event_kind::kNote),
             "memory snapshot written to " + path + " (open it at pytorch.org/memory_viz)"});
    } catch (const std::exception& error) {
        // The run's results stand; only the snapshot is lost.
        observer.on_event({step, std::string(event_kind::kNote), error.what()});
    }
    m_history.reset();
}

std::vector<MemoryStage> MemoryLedger::take_staircase(std::int64_t steps) {
    if (steps >= 2 && m_last_step) {
        m_staircase.push_back(
            {std::string(stage::kSteadyState), m_last_step->step_peak, m_last_step->device_used});
    }
    return std::move(m_staircase);
}

MemoryBreakdown MemoryLedger::breakdown(const TrainedModel& trained, bool sparse_table,
                                        std::int64_t resident_data_bytes) const {
    MemoryBreakdown breakdown;
    if (!trained.model) {
        return breakdown;
    }
    const model::EmbeddingTableImpl& table = *trained.model->embeddings();
    for (const auto& parameter : trained.model->parameters()) {
        if (parameter.device().type() != m_device) {
            continue;  // a table kept in host memory: neither it nor its gradient is the device's
        }
        const auto bytes = static_cast<std::int64_t>(parameter.nbytes());
        const std::int64_t kept =
            trained.parallel ? trained.parallel->kept_bytes(parameter) : bytes;
        (table.holds(parameter) ? breakdown.embedding_table : breakdown.parameters) += kept;
        // Where nothing was measured: gradients exist during every step.
        if (trained.has_dense_gradient(parameter, sparse_table)) {
            breakdown.gradients += bytes;
        }
    }
    breakdown.optimizer_state = trained.optimizer ? optimizer_state_bytes(*trained.optimizer) : 0;
    const std::optional<memory::ModuleLedger> ledger = m_monitor.ledger_at_peak();
    if (ledger && trained.parallel && trained.parallel->shards_parameters()) {
        // ZeRO-3: the parameters held at the peak, this rank's range and the parts gathered.
        breakdown.embedding_table = 0;
        breakdown.parameters = 0;
        for (const model::MemoryModule& module : trained.model->memory_modules()) {
            const bool holds_table =
                std::any_of(module.parameters.begin(), module.parameters.end(),
                            [&](const torch::Tensor& parameter) { return table.holds(parameter); });
            (holds_table ? breakdown.embedding_table : breakdown.parameters) +=
                ledger->held(module.id, memory::AllocationTag::Setup);
        }
    }
    if (ledger) {
        // What was held at the peak, which may come before the first update created the state
        // or while backward had produced only some of the gradients.
        breakdown.gradients = held_by_all_modules(*ledger, memory::AllocationTag::Gradients);
        breakdown.optimizer_state =
            held_by_all_modules(*ledger, memory::AllocationTag::OptimizerState);
    }
    breakdown.data = resident_data_bytes + m_largest_batch_bytes;
    const std::int64_t resident = breakdown.embedding_table + breakdown.parameters +
                                  breakdown.gradients + breakdown.optimizer_state + breakdown.data;
    breakdown.activations = std::max<std::int64_t>(0, m_monitor.run_peak() - resident);
    // Cache and the rest of the device as seen at the end of the step that peaked.
    breakdown.allocator_cache = m_monitor.cache_at_peak().value_or(
        std::max<std::int64_t>(0, m_at_peak.reserved - m_at_peak.allocated));
    if (m_at_peak.device_used) {
        breakdown.other = std::max<std::int64_t>(0, *m_at_peak.device_used - m_at_peak.reserved);
    }
    return breakdown;
}

}  // namespace oomlab::train
