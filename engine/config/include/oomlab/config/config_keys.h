// Config keys: the one registry that files, `--set KEY=VALUE`, the GUI's controls and their
// tooltips all use. Every error names the key and the allowed values.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "oomlab/config/experiment_config.h"

namespace oomlab {

enum class ValueKind { Integer, Real, Boolean, Choice, Text };

struct ConfigKeyInfo {
    std::string name;  // "train.batch_size"
    ValueKind kind = ValueKind::Text;
    std::vector<std::string> choices;  // Choice keys; "top:N" style patterns included
    double minimum = 0;                // Integer/Real: the smallest valid value
    double maximum = 0;                // Integer/Real: the largest (0: unbounded)
    std::string help;                  // one or two sentences: what the setting teaches
};

const std::vector<ConfigKeyInfo>& config_keys();
const ConfigKeyInfo* find_config_key(std::string_view name);

// The known key nearest to `name` (edit distance), for "did you mean" messages.
std::string closest_config_key(std::string_view name);

// Reads one value as text ("32", "adam", "true"). Throws BadInput for unknown keys.
std::string get_config_value(const ExperimentConfig& config, std::string_view key);

// Sets one value from text, validating it. Throws BadInput naming the key, the allowed values
// and, for unknown keys, the closest known key.
void set_config_value(ExperimentConfig& config, std::string_view key, std::string_view value);

// Several keys and their values as text, in the order they apply.
using Settings = std::vector<std::pair<std::string, std::string>>;
void apply_settings(ExperimentConfig& config, const Settings& settings);

// Applies "KEY=VALUE" (the CLI's --set).
void apply_config_override(ExperimentConfig& config, std::string_view assignment);

}  // namespace oomlab
