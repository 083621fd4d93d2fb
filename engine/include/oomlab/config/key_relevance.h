// Which settings matter for an experiment: a transformer's heads mean nothing to a
// bag-of-words model. Front ends grey out the others and say why.
#pragma once

#include <string>
#include <string_view>

#include "oomlab/config/experiment_config.h"

namespace oomlab {

// Empty when `key` affects a run of `config`, else why it does not ("used by
// model.kind=transformer").
std::string key_inactive_reason(const ExperimentConfig& config, std::string_view key);

}  // namespace oomlab
