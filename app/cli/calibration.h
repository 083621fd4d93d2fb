// The estimator's record in a run database, as `estimate` and `runs calibration` print it.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "oomlab/run/prediction_record.h"

namespace oomlab::cli {

// The record of the database at `db` (all runs, and those of `model`), or nullopt when there
// is no database there: reading a record never creates one.
struct EstimateRecord {
    PredictionRecord all;
    PredictionRecord of_model;
    std::string model;
};
std::optional<EstimateRecord> estimate_record(const std::string& db, const std::string& model);

nlohmann::ordered_json record_json(const PredictionRecord& record);
nlohmann::ordered_json case_json(const CalibrationCase& one);
// "  record: in 12 runs here, ...; of the bag runs: ...", then a warning where a run of this
// model measured more than its prediction beyond the tolerance.
void print_estimate_record(const EstimateRecord& record);

// runs calibration [--db FILE] [--json] [--model KIND] [--worst N]
void add_calibration_command(CLI::App& runs, int& exit_code);

}  // namespace oomlab::cli
