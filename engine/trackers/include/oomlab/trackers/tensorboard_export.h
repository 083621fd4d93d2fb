// A saved run as TensorBoard event files: every per-step series as scalars, the settings for
// the HParams view, the breakdown at the peak beside the prediction as a table.
#pragma once

#include <cstddef>
#include <string>

#include "oomlab/trackers/tracked_run.h"

namespace oomlab::trackers {

struct TensorBoardExport {
    std::string run_folder;  // the run's folder in the log folder: TensorBoard's run name
    std::string event_file;
    std::size_t scalars = 0;  // scalar values written
};

// The run's folder name under a log folder: "<id>-<name>-<uid's first 8 digits>", so runs of
// different databases never share one and the same run always gets the same.
std::string tensorboard_run_folder(const TrackedRun& tracked);

// Writes the run's event file into <log_dir>/<run folder>/, replacing what an earlier export
// of the same run wrote there (exporting twice leaves one copy). Throws Error naming the path
// when it cannot be written.
TensorBoardExport export_to_tensorboard(const TrackedRun& tracked, const std::string& log_dir);

// "run 3 -> TensorBoard <event file> (120 scalar values)".
std::string describe(const TrackedRun& tracked, const TensorBoardExport& written);

}  // namespace oomlab::trackers
