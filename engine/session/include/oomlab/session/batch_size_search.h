// The largest micro-batch that fits under the memory cap. Each trial trains two optimizer
// steps on the worst batch the padding mode can produce (the longest examples) and runs the
// validation pass, so the batch found never runs out of memory later in a full run. As one
// rank of a data-parallel group, every rank runs the same trials together (each on the worst
// batch, with its buckets and shards), and a batch fits only when it fits on every rank.
#pragma once

#include <functional>
#include <optional>

#include "oomlab/config/experiment_config.h"
#include "oomlab/launch/rendezvous.h"
#include "oomlab/run/batch_search.h"

namespace oomlab {

// The search itself, over any test of whether a batch fits: from `predicted` (the estimator's
// answer) it steps outwards until the answer is bracketed, then bisects to within 1/32 (and
// one example). Returns the largest batch up to `most` found to fit; 0 when not even 1 does.
int search_largest_batch(int predicted, int most, const std::function<bool(int)>& fits);

// Throws BadInput when there is no cap to fit under (memory.cap_mb on the CPU) or when a run's
// memory grows with its length (debug.keep_loss_graph), Error when a
// trial fails other than by running out of memory.
BatchSizeSearch find_batch_size(const ExperimentConfig& config,
                                const std::function<void(const BatchTrial&)>& on_trial = {},
                                const std::optional<Rendezvous>& rendezvous = {});

}  // namespace oomlab
