// Config files: JSON, either nested ({"train": {"batch_size": 32}}) or flat
// ({"train.batch_size": 32}). Written back nested, every key present.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "oomlab/config/experiment_config.h"

namespace oomlab {

// Starts from the defaults and applies the JSON's keys. `source` names the file in errors.
ExperimentConfig parse_config_json(const std::string& json_text, const std::string& source);
ExperimentConfig load_config_file(const std::string& path);
// Applies a JSON document's keys on top of `config`.
void merge_config_json(ExperimentConfig& config, const std::string& json_text,
                       const std::string& source);

std::string config_to_json(const ExperimentConfig& config, int indent = 2);
void save_config_file(const ExperimentConfig& config, const std::string& path);

// Checks that the settings make sense together (e.g. fp16 needs CUDA, heads divide d_model).
// Throws BadInput naming the keys and what to change.
void validate_config(const ExperimentConfig& config);

// The input files the settings name (dataset.path, dataset.valid_path, embeddings.path of a
// file source), each checked as a run checks it before it trains: for each one that is not
// there, not readable or not of its kind, its key and the message naming it.
std::vector<std::pair<std::string, std::string>> config_input_problems(
    const ExperimentConfig& config);

// What training with several processes does not do, for `world_size` processes on CUDA
// devices or not: checked before any process waits for another, and before a change is
// suggested. Throws BadInput naming the keys. Nothing to check for one process.
void validate_data_parallel(const ExperimentConfig& config, int world_size, bool on_cuda);

}  // namespace oomlab
