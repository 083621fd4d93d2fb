// The run store: one SQLite file (WAL) holding runs, their metrics and events.
//
// Each thread opens its own RunStore. Opening migrates the schema forward (PRAGMA
// user_version) and marks runs left `running` by a process that no longer exists as
// `interrupted`. Metrics are appended in one transaction per call.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "oomlab/memory/breakdown.h"

namespace oomlab {

enum class RunStatus { Running, Completed, Oom, Failed, Cancelled, Interrupted };

std::string_view run_status_name(RunStatus status);  // "running", "completed", ...
std::optional<RunStatus> parse_run_status(std::string_view name);

struct NewRun {
    std::string name;
    std::string config_json;  // the effective config
    std::string device;       // "cpu", "cuda:0 (NVIDIA H100 80GB HBM3)"
    std::string engine_version;
    std::string torch_version;
    int world_size = 1;  // processes training the run together (data parallel)
};

struct RunRecord {
    std::int64_t id = 0;
    std::string name;
    RunStatus status = RunStatus::Running;
    std::string config_json;
    std::string created_at;   // ISO 8601 UTC
    std::string finished_at;  // empty while running
    std::string device;
    std::string engine_version;
    std::string torch_version;
    std::string error;
    std::string notes;
    std::int64_t steps = 0;
    std::optional<double> final_train_loss;
    std::optional<double> val_accuracy;
    std::int64_t peak_bytes = 0;
    double wall_seconds = 0;
    MemoryBreakdown breakdown;
    int world_size = 1;
};

// What a run ends with.
struct RunOutcome {
    RunStatus status = RunStatus::Completed;
    std::string error;
    std::int64_t steps = 0;
    std::optional<double> final_train_loss;
    std::optional<double> val_accuracy;
    std::int64_t peak_bytes = 0;
    double wall_seconds = 0;
    MemoryBreakdown breakdown;
};

// One sample of a run's progress. Optional figures are absent when not measured
// (e.g. device_used without NVML, loss at a phase boundary).
struct MetricRow {
    std::int64_t step = 0;
    std::string phase;  // "step", "batch", "forward", "backward", "optimizer", "eval", "oom"
    double wall_ms = 0;
    std::optional<double> loss;
    std::optional<double> accuracy;  // validation rows
    std::optional<std::int64_t> allocated_bytes;
    std::optional<std::int64_t> reserved_bytes;
    std::optional<std::int64_t> peak_bytes;
    std::optional<std::int64_t> device_used_bytes;
    std::optional<std::int64_t> device_total_bytes;
    std::optional<std::int64_t> alloc_retries;  // the CUDA caching allocator's, since the run began
    std::optional<std::int64_t> oom_count;      // allocations refused since the run began
    std::optional<double> samples_per_s;
    int rank = 0;  // the process that measured it, in a data-parallel run
};

struct EventRow {
    std::int64_t step = 0;
    std::string kind;  // "oom", "adapt", "eval", "note", ...
    std::string message;
};

struct RunFilter {
    std::optional<RunStatus> status;
    std::string name_contains;
    std::int64_t limit = 0;  // 0: all
};

class RunStore {
public:
    // Creates the file (and its folder) if needed. Throws BadInput naming the file when it
    // is not a database or was written by a newer schema.
    static RunStore open(const std::string& path);
    ~RunStore();
    RunStore(RunStore&&) noexcept;
    RunStore& operator=(RunStore&&) noexcept;

    const std::string& path() const;
    int schema_version() const;

    std::int64_t create_run(const NewRun& run);
    void append_metrics(std::int64_t run_id, const std::vector<MetricRow>& rows);
    void add_event(std::int64_t run_id, const EventRow& event);
    void finish_run(std::int64_t run_id, const RunOutcome& outcome);

    std::vector<RunRecord> list_runs(const RunFilter& filter = {}) const;
    std::optional<RunRecord> find_run(std::int64_t run_id) const;
    std::vector<MetricRow> metrics(std::int64_t run_id) const;
    std::vector<EventRow> events(std::int64_t run_id) const;

    bool delete_run(std::int64_t run_id);  // false when there is no such run
    void rename_run(std::int64_t run_id, const std::string& name);
    void set_notes(std::int64_t run_id, const std::string& notes);

    // The GUI's database: $XDG_DATA_HOME/oomlab/runs.sqlite (or ~/.local/share/...).
    static std::string default_path();

private:
    struct Impl;
    explicit RunStore(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

}  // namespace oomlab
