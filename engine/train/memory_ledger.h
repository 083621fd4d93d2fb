// What a run's memory did: the device's samples and the step that peaked, the staircase of
// the run's stages, the free space at an OOM, the snapshot, and the breakdown of the peak.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "oomlab/measure/memory_history.h"
#include "oomlab/measure/memory_monitor.h"
#include "oomlab/session/experiment.h"
#include "trained_model.h"

namespace oomlab::train {

class MemoryLedger {
public:
    // `cap_bytes` > 0 makes allocations past it fail as out of memory; `alloc_conf` is
    // memory.alloc_conf.
    MemoryLedger(const c10::Device& device, std::int64_t cap_bytes, const std::string& alloc_conf);

    // debug.memory_snapshot: records every allocation from now on.
    void start_history(const c10::Device& device);
    memory::MemorySample sample() { return m_monitor.sample(); }
    void begin_step() { m_monitor.begin_step(); }
    std::int64_t run_peak() const { return m_monitor.run_peak(); }
    std::optional<memory::ModuleLedger> modules_now() const { return m_monitor.ledger_now(); }
    std::optional<memory::ModuleLedger> modules_at_peak() const {
        return m_monitor.ledger_at_peak();
    }

    // A stage of the staircase, at what is allocated now.
    void add_stage(std::string_view stage);
    void note_batch(std::int64_t bytes) {
        m_largest_batch_bytes = std::max(m_largest_batch_bytes, bytes);
    }
    // Samples the end of step `step`; the first step's adds the state and first-peak stages.
    memory::MemorySample end_step(std::int64_t step);
    // `message` with the allocator's state at the OOM and, where the failed request is named,
    // its free space.
    std::string describe_oom(const std::string& message, const memory::MemorySample& state);
    // Writes debug.memory_snapshot, reporting where to `observer` (or why not: the run stands).
    void write_snapshot(const ExperimentConfig& config, TrainObserver& observer, std::int64_t step);

    // The staircase after `steps` steps, with the steady state when there were two or more.
    std::vector<MemoryStage> take_staircase(std::int64_t steps);
    std::optional<Fragmentation> fragmentation() const { return m_fragmentation; }
    // The peak by category: what was held at it, where the allocator could attribute it.
    MemoryBreakdown breakdown(const TrainedModel& trained, bool sparse_table,
                              std::int64_t resident_data_bytes) const;

private:
    c10::DeviceType m_device;  // the run's: a parameter elsewhere (a table on the host) is not its
    memory::MemoryMonitor m_monitor;
    std::string m_alloc_conf;  // memory.alloc_conf, for the words of an OOM's verdict
    std::unique_ptr<memory::MemoryHistory> m_history;
    memory::MemorySample m_at_peak;  // the end of the step with the highest peak
    std::optional<memory::MemorySample> m_last_step;
    std::vector<MemoryStage> m_staircase;
    std::optional<Fragmentation> m_fragmentation;
    std::int64_t m_largest_batch_bytes = 0;
};

}  // namespace oomlab::train
