// Which settings matter for an experiment: a transformer's heads mean nothing to a
// bag-of-words model. Front ends grey out the others and say why.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "oomlab/config/experiment_config.h"

namespace oomlab {

// Empty when `key` affects a run of `config` trained by `processes` processes, else why it does
// not ("used by model.kind=transformer").
std::string key_inactive_reason(const ExperimentConfig& config, std::string_view key,
                                int processes = 1);

// "KEY=VALUE has no effect here: REASON" for each setting changed from its default that a run of
// `config` by `processes` processes ignores: a run notes them, so nobody reads an effect
// into a setting that had none.
std::vector<std::string> unused_settings(const ExperimentConfig& config, int processes);

}  // namespace oomlab
