// A saved run as a team's tracker (MLflow, TensorBoard) receives it: one mapping from the
// run store's vocabulary to named series, parameters and final values, shared by every
// exporter so that a run reads the same in each.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "oomlab/run/run_record.h"
#include "oomlab/store/run_store.h"

namespace oomlab::trackers {

// What an export reads from the run store, and an import writes back: the run whole.
using TrackedRun = WholeRun;

// Run `run_id` of `store`; throws BadInput when there is none.
TrackedRun tracked_run(const RunStore& store, std::int64_t run_id);

// Whether `uid` is one OOM Lab writes: hexadecimal digits only, at most 64 (32 today; none for
// runs older than uids). A uid names the files and runs it becomes on a tracker, so nothing
// else is sent, or taken back from one.
bool is_run_uid(const std::string& uid);

struct SeriesPoint {
    std::int64_t step = 0;
    double wall_ms = 0;  // since the run began
    double value = 0;
};

// One metric over a run's steps: "train/loss", "memory/allocated_MiB", "eval/accuracy"; a
// data-parallel run's other ranks are prefixed ("rank 1/memory/peak_MiB").
struct Series {
    std::string name;
    std::vector<SeriesPoint> points;
};

// The per-step series: loss, memory (allocated, reserved, peak, device used, in MiB) and
// speed from the end of each optimizer step, and validation loss and accuracy.
std::vector<Series> run_series(const TrackedRun& tracked);

// One value per run, at its last step: the measured breakdown at the peak and the
// prediction beside it ("peak/activations_MiB", "predicted/activations_MiB"), the final loss,
// accuracy, steps and time.
std::vector<std::pair<std::string, double>> final_values(const RunRecord& run);

// One setting of a run, by its dotted key ("train.batch_size"), as text and as its type.
struct RunParam {
    std::string key;
    std::string text;  // "32", "adam", "true"
    std::optional<double> number;
    std::optional<bool> flag;
};

// The run's settings, sorted by key.
std::vector<RunParam> run_params(const RunRecord& run);

// Milliseconds since 1970 of the run's start (its created_at), 0 if unreadable.
std::int64_t run_start_epoch_ms(const RunRecord& run);

inline constexpr double kBytesPerMiB = 1024.0 * 1024.0;

}  // namespace oomlab::trackers
