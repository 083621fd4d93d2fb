// The vocabulary of a run, shared by the engine that trains it, the store that keeps it and
// the front ends that show it: its status, the metric rows and events it produces, how it
// ended, and the record of a saved run. Plain structs: no torch, no SQLite.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "oomlab/run/breakdown.h"
#include "oomlab/run/fragmentation.h"

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

// What one part of the model held (see `runs show --json`, key by_module): the parameters,
// gradients and optimizer state it owns, and what its forward and backward held at the moment
// measured. Not measured where the allocator cannot attribute bytes (CUDA): activations absent.
struct ModuleMemory {
    std::string module;  // "embeddings", "block 1", "head", "loss", "optimizer", "other"
    std::int64_t parameters = 0;
    std::int64_t gradients = 0;
    std::int64_t optimizer_state = 0;
    std::optional<std::int64_t> activations;  // of a layer; a step's temporaries (below)

    // The loss, the update and the rest are steps of training, not layers: what they hold
    // beside parameters is that step's temporaries, never activations.
    bool is_training_step() const {
        return module == "loss" || module == "optimizer" || module == "other";
    }
    std::int64_t layer_activations() const {
        return is_training_step() ? 0 : activations.value_or(0);
    }
    std::int64_t temporaries() const { return is_training_step() ? activations.value_or(0) : 0; }
};

// The activations a module held at a phase boundary of a sampled step.
struct ModuleSample {
    std::int64_t step = 0;
    std::string phase;  // one of oomlab::phase
    std::string module;
    std::int64_t activations = 0;
};

// The staircase: memory after each stage of a run, as people draw it by hand.
namespace stage {
inline constexpr std::string_view kEmpty = "empty";                     // the run's start
inline constexpr std::string_view kDeviceContext = "device context";    // CUDA only
inline constexpr std::string_view kWeights = "weights";                 // table and parameters
inline constexpr std::string_view kData = "resident data";              // data.loading=eager
inline constexpr std::string_view kOptimizerState = "optimizer state";  // after the first step
inline constexpr std::string_view kFirstPeak = "first step peak";
inline constexpr std::string_view kSteadyState = "steady state";  // the last step's peak
}  // namespace stage

struct MemoryStage {
    std::string stage;  // one of oomlab::stage, in the order they happened
    std::int64_t allocated_bytes = 0;
    std::optional<std::int64_t> device_used_bytes;
};

// Wall time spent in one part of a run (RunOutcome::time_by_part): "setup", "data",
// "forward", "backward", "update", "evaluation", "measurement", "recording", "finish".
struct PartTime {
    std::string part;
    double seconds = 0;
};

// What a run ends with.
// A run's final training loss is the mean loss of its last this many steps (one step's loss
// is noisy); a run that ended without its summary gets the same from its rows.
inline constexpr int kFinalLossSteps = 20;

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
    std::vector<ModuleMemory> by_module;  // at the peak, in forward order
    std::vector<ModuleSample> module_samples;
    std::vector<MemoryStage> staircase;
    std::optional<Fragmentation> fragmentation;  // at the OOM that ended or adapted the run
    // Where the run's wall time went, part by part; empty for runs read back from a database
    // (not stored).
    std::vector<PartTime> time_by_part;

    // Whether the breakdown at the peak was recorded: a run whose writer died (killed, the
    // machine lost) has only the peak its step rows hold, and no breakdown to show as zeros.
    bool has_breakdown() const;
};

// One process of a data-parallel run, from the rows it recorded.
struct RankMemory {
    int rank = 0;
    // How the rank ended: none while it trains, or for a run saved before ranks' endings were
    // kept.
    std::optional<RunStatus> status;
    std::int64_t steps = 0;
    std::int64_t peak_bytes = 0;  // its run peak (older runs: the highest step peak it recorded)
    std::int64_t parameters = 0;  // at its peak (by module, summed)
    std::int64_t gradients = 0;
    std::int64_t optimizer_state = 0;
};

// What the estimator predicted for a run when it started (one rank of a data-parallel run),
// stored with the run; see prediction_check.h.
struct MemoryPrediction {
    std::int64_t peak_bytes = 0;
    MemoryBreakdown breakdown;
    std::vector<ModuleMemory> by_module;
    int worst_batch_length = 0;      // padded tokens of the worst micro-batch it assumed
    bool every_batch_worst = false;  // every batch padded to that length (train.padding=fixed)
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
    std::vector<RankMemory> ranks;  // world_size > 1 (find_run only): each rank that recorded
    RunOutcome outcome{RunStatus::Running};
    std::optional<MemoryPrediction> prediction;  // none for runs of older versions
    // Run out of memory: the fixes it was offered (oom_fixes_json), empty for other runs and
    // those of older versions.
    std::string fixes_json;
    std::optional<std::int64_t> fix_of;  // the run whose out-of-memory this run tried to fix
    // What a tracker gets with the run besides its own figures: a lesson's run, its lesson,
    // its place in it and the student's prediction (lesson_tags), so that the run sent again
    // later still carries them.
    std::map<std::string, std::string> tracker_tags;
};

}  // namespace oomlab
