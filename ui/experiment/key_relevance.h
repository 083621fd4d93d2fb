// Which settings matter for the current experiment: a transformer's heads mean nothing to a
// bag-of-words model. The form greys out the others and says why.
#pragma once

#include <QString>

#include "oomlab/config/experiment_config.h"

namespace oomlab::ui {

// Empty when `key` affects a run of `config`, else why it does not ("used by
// model.kind=transformer").
QString keyInactiveReason(const ExperimentConfig& config, const QString& key);

}  // namespace oomlab::ui
