// The micro-batch and accumulation a run ended with, against those its config planned:
// on_oom=halve and on_oom=adapt change them when a step runs out of memory. One rule for every
// view that says whether a run adapted (the Runs table, the live page's ending).
#pragma once

#include "oomlab/run/run_record.h"

namespace oomlab {

// A micro-batch and how many of them make one optimizer step.
struct BatchShape {
    int batch_size = 0;
    int accumulation = 1;
};

// Whether the run ended with another micro-batch or accumulation than `planned`. A run that
// recorded no micro-batch (batch_size 0: it failed before training, or a version before they
// were kept) did not adapt; an accumulation of 0 (not recorded) is 1.
bool batch_adapted(const RunOutcome& outcome, const BatchShape& planned);

// What the run trained with at its end: the outcome's micro-batch and accumulation when it
// adapted, else `planned`.
BatchShape ended_batch(const RunOutcome& outcome, const BatchShape& planned);

}  // namespace oomlab
