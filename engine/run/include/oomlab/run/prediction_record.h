// The estimator's record on the runs of one database: how often its predicted peak was under
// what the run measured, and by how much at most, with the worst cases and their causes.
// `oomlab-cli estimate` and the workbench's prediction say it beside a new prediction;
// `runs calibration` lists it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "oomlab/run/run_record.h"

namespace oomlab {

// One run held to its prediction: the peak predicted and measured.
struct CalibrationCase {
    std::int64_t run_id = 0;
    std::string name;
    std::string model;  // model.kind of its config
    std::int64_t predicted = 0;
    std::int64_t measured = 0;
    std::string cause;  // the known cause of a disagreement, or empty

    double off() const;  // (measured - predicted) / predicted
    bool under() const { return measured > predicted; }
};

struct PredictionRecord {
    int runs = 0;               // runs held to their prediction (completed, with one stored)
    int under = 0;              // whose measured peak was above the prediction
    double worst_under = 0;     // the largest off() among those, 0 when none
    int outside_tolerance = 0;  // off by more than 10% (and 64 KiB), either way
    std::vector<CalibrationCase> worst;  // by |off()|, largest first
};

// The record over `runs` (of any status: only completed runs with a prediction count),
// keeping the `worst_count` worst cases. `model`, when not empty, keeps the runs of that
// model.kind only.
PredictionRecord prediction_record(const std::vector<RunRecord>& runs, std::size_t worst_count = 10,
                                   const std::string& model = "");

// The record over all runs and over the runs of each model.kind, in one pass.
struct PredictionRecords {
    PredictionRecord all;
    std::map<std::string, PredictionRecord> by_model;  // runs of no known kind under ""

    // The record of `model`'s runs (an empty one when there are none).
    const PredictionRecord& of_model(const std::string& model) const;
};
PredictionRecords prediction_records(const std::vector<RunRecord>& runs, std::size_t worst_count);

// "412 runs here checked against the estimate: 3 needed more than it said, by at most 2.1%"
// (or "... none needed more than it said", "no completed run here was held to its prediction
// yet").
std::string describe(const PredictionRecord& record);

}  // namespace oomlab
