// The estimator's prediction for a run beside what the run measured, by category and by
// module: "is the memory where the estimator said it would be?" A figure that disagrees by
// more than 10% (and 64 KiB) is marked, with the cause in words where it is known.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "oomlab/run/breakdown.h"
#include "oomlab/run/run_record.h"

namespace oomlab {

struct PredictionRow {
    // "peak", "reserved" (the peak and the allocator's cache beside it), a kBreakdownKeys
    // entry, or a module's kind of memory ("parameters", "gradients", "optimizer_state",
    // "activations"; "temporaries" for the loss, the update and the rest).
    std::string category;
    std::string module;  // empty for the peak and the categories
    std::int64_t predicted = 0;
    std::int64_t measured = 0;
    bool disagrees = false;  // |measured - predicted| > max(10% of predicted, 64 KiB)
    std::string why;         // the known cause of a disagreement, else empty

    // (measured - predicted) / predicted; none where nothing was predicted.
    std::optional<double> off() const;
};

struct PredictionCheck {
    // Set when the run cannot be held to its prediction at all (it ended before a whole
    // step): then no row is marked, and this says why.
    std::string not_comparable;
    std::vector<PredictionRow> by_category;  // the peak, then the categories in it
    std::vector<PredictionRow> by_module;    // module x kind, in the prediction's order
    int disagreements() const;
};

inline constexpr double kPredictionTolerance = 0.10;
inline constexpr std::int64_t kPredictionSlackBytes = 64 << 10;

bool prediction_disagrees(std::int64_t predicted, std::int64_t measured);

// The run's figures against its prediction. Rows where both are 0 are left out. On the CPU
// (no allocator cache, no device) the categories beside the peak are left out too.
PredictionCheck check_prediction(const MemoryPrediction& predicted, const RunOutcome& measured);

// As stored with a run and in `runs show --json` ("prediction"): {"peak_bytes", "breakdown",
// "by_module", "worst_batch_length", "every_batch_worst"}.
std::string prediction_json(const MemoryPrediction& prediction);
// nullopt for text that is not one (a damaged row): the run is shown without it.
std::optional<MemoryPrediction> parse_prediction_json(const std::string& text);

}  // namespace oomlab
