// How a process of OOM Lab ends: the exit codes of oomlab-cli's contract, which a launcher of
// worker processes reads back. One table for both sides.
#pragma once

#include "oomlab/run/run_record.h"

namespace oomlab {

enum ExitCode : int {
    kExitOk = 0,
    kExitFailure = 1,
    kExitBadInput = 2,  // a config or input refused before anything ran; the message says why
    kExitOutOfMemory = 3,
    kExitOverLimit = 4,      // a --fail-over check: memory grew past the limit it was given
    kExitInterrupted = 130,  // stopped by SIGINT or SIGTERM, what was measured saved
};

// A run's exit code from how it ended.
inline ExitCode exit_code_of(RunStatus status) {
    switch (status) {
        case RunStatus::Completed:
            return kExitOk;
        case RunStatus::Oom:
            return kExitOutOfMemory;
        case RunStatus::Cancelled:
            return kExitInterrupted;
        default:
            return kExitFailure;
    }
}

}  // namespace oomlab
