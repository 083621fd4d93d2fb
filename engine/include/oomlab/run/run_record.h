// The vocabulary of a run, shared by the engine that trains it, the store that keeps it and
// the front ends that show it: its status, the metric rows and events it produces, how it
// ended, and the record of a saved run. Plain structs: no torch, no SQLite.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "oomlab/run/breakdown.h"

namespace oomlab {

enum class RunStatus { Running, Completed, Oom, Failed, Cancelled, Interrupted };

std::string_view run_status_name(RunStatus status);  // "running", "completed", ...
std::optional<RunStatus> parse_run_status(std::string_view name);

// Where in a step a metric row was measured (MetricRow::phase).
namespace phase {
inline constexpr std::string_view kStep = "step";    // the end of an optimizer step, with its loss
inline constexpr std::string_view kBatch = "batch";  // a micro-batch is ready
inline constexpr std::string_view kForward = "forward";
inline constexpr std::string_view kBackward = "backward";
inline constexpr std::string_view kOptimizer = "optimizer";
inline constexpr std::string_view kEval = "eval";  // a validation pass, with loss and accuracy
inline constexpr std::string_view kOom = "oom";    // the allocator's state at an out-of-memory
}  // namespace phase

// What an event reports (EventRow::kind).
namespace event_kind {
inline constexpr std::string_view kNote = "note";
inline constexpr std::string_view kEval = "eval";
inline constexpr std::string_view kOom = "oom";
inline constexpr std::string_view kHalve = "halve";  // on_oom=halve: the batch was halved
inline constexpr std::string_view kAdapt =
    "adapt";  // on_oom=adapt: micro-batch halved, accumulation doubled
inline constexpr std::string_view kDiverged = "diverged";  // the loss became NaN or infinite
}  // namespace event_kind

// One sample of a run's progress. Optional figures are absent when not measured
// (e.g. device_used without NVML, loss at a phase boundary).
struct MetricRow {
    std::int64_t step = 0;
    std::string phase;  // one of oomlab::phase
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
    std::string kind;  // one of oomlab::event_kind
    std::string message;
};

// What a run ends with.
struct RunOutcome {
    RunOutcome() = default;
    explicit RunOutcome(RunStatus initial) : status(initial) {}

    RunStatus status = RunStatus::Completed;
    std::string error;
    std::int64_t steps = 0;
    std::optional<double> final_train_loss;
    std::optional<double> val_accuracy;
    std::int64_t peak_bytes = 0;
    double wall_seconds = 0;
    MemoryBreakdown breakdown;
    // The micro-batch and accumulation the run ended with: on_oom=halve or adapt may have
    // changed them from the config's. 0 when not recorded (runs of older versions).
    int batch_size = 0;
    int accumulation = 0;
};

// A saved run: who and what it was, and its outcome so far (status Running while it trains).
struct RunRecord {
    std::int64_t id = 0;
    std::string name;
    std::string config_json;
    std::string created_at;   // ISO 8601 UTC
    std::string finished_at;  // empty while running
    std::string device;
    std::string engine_version;
    std::string torch_version;
    std::string notes;
    std::string tags;  // comma-separated, as the user wrote them
    int world_size = 1;
    RunOutcome outcome{RunStatus::Running};
};

}  // namespace oomlab
