// JSON forms of runs, shared by `oomlab-cli --json` and the GUI's exports.
#pragma once

#include <string>
#include <vector>

#include "oomlab/store/run_store.h"

namespace oomlab {

// The summary object: run_id, name, status, steps, final_train_loss, val_accuracy,
// peak_bytes, wall_seconds, device, error, breakdown{...}, ... (one line, no newline).
std::string run_summary_json(const RunRecord& run);

// The whole run: summary, config, metrics and events.
std::string run_export_json(const RunRecord& run, const std::vector<MetricRow>& metrics,
                            const std::vector<EventRow>& events, int indent = 2);

// Metrics as CSV with a header row; absent values are empty cells.
std::string metrics_csv(const std::vector<MetricRow>& metrics);

}  // namespace oomlab
