// JSON forms of runs, shared by `oomlab-cli --json` and the GUI's exports.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "oomlab/run/run_record.h"

namespace oomlab {

// The summary object: run_id, name, status, steps, final_train_loss, val_accuracy,
// peak_bytes, wall_seconds, device, error, breakdown{...}, ... (one line, no newline).
std::string run_summary_json(const RunRecord& run);

// A summary read back (what another machine's run_summary_json wrote): the outcome (status,
// steps, losses, peak, time, the batch as it ended, breakdown, by_module, staircase,
// fragmentation), the prediction and fixes, name, device, versions, times and tags; not the
// config, rows or events, which a summary does not hold. Absent keys keep their defaults;
// throws BadInput naming `source` and the key for a value of the wrong type.
RunRecord run_from_summary_json(const std::string& text, const std::string& source);

// The by_module list: [{"module", "parameters", "gradients", "optimizer_state",
// "activations"}], where the loss, the optimizer and "other" have "temporaries" in place of
// "activations"; shared by runs and the estimator's predictions, as a value to place in a
// document.
nlohmann::ordered_json module_memory_value(const std::vector<ModuleMemory>& modules);

// The breakdown as {"embedding_table": bytes, ...}, in kBreakdownKeys order.
nlohmann::ordered_json breakdown_value(const MemoryBreakdown& breakdown);

// A run's prediction as stored with it and shown by `runs show --json`: {"peak_bytes",
// "breakdown", "by_module", "worst_batch_length", "every_batch_worst"}.
nlohmann::ordered_json prediction_value(const MemoryPrediction& prediction);

// The whole run: summary, config, metrics and events.
std::string run_export_json(const RunRecord& run, const std::vector<MetricRow>& metrics,
                            const std::vector<EventRow>& events, int indent = 2);

// A whole run as run_export_json wrote it, read back; BadInput names `source` and the key of
// a figure no run has.
struct RunExport {
    RunRecord run;
    std::vector<MetricRow> metrics;
    std::vector<EventRow> events;
};
RunExport run_from_export_json(const std::string& text, const std::string& source);

// The metrics of one or more runs as CSV with a header row: every row starts with its run_id
// and rank, so the rows of several runs and ranks stay apart; absent values are empty cells.
struct RunMetrics {
    std::int64_t run_id = 0;
    std::vector<MetricRow> rows;
};
std::string metrics_csv(const std::vector<RunMetrics>& runs);

// Whether `path` holds an export of these (CSV or JSON), which another export may replace.
bool is_run_export_file(const std::string& path);

// A run's tracker tags as stored (a JSON object of strings; "" for none), and read back: a
// text that is not such an object (a damaged row) reads as none.
std::string tracker_tags_json(const std::map<std::string, std::string>& tags);
std::map<std::string, std::string> parse_tracker_tags(const std::string& text);

}  // namespace oomlab
