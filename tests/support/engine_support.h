// Helpers for tests that build experiments (they link oomlab_config, and oomlab_session for
// the listener).
#pragma once

#include <initializer_list>
#include <string>

#include "oomlab/config/config_keys.h"
#include "oomlab/session/run_session.h"

namespace oomlab::test {

// `base` with each "KEY=VALUE" applied in order, as --set would.
inline ExperimentConfig config_with(std::initializer_list<std::string> assignments,
                                    ExperimentConfig base = {}) {
    for (const std::string& assignment : assignments) {
        apply_config_override(base, assignment);
    }
    return base;
}

// A run listener that ignores everything.
class QuietListener : public RunListener {};

// A training observer that ignores everything.
class QuietObserver : public TrainObserver {};

}  // namespace oomlab::test
