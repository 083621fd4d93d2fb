// Which examples a run trains together, and in which order: the plan the training engine
// follows, torch-free so that the estimator can predict the batches a run will really draw.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "oomlab/config/experiment_config.h"

namespace oomlab::prepare {

using BatchPlan = std::vector<std::vector<std::int64_t>>;  // example indices per micro-batch
// The length of example `index`, in tokens after train.max_len.
using ExampleLength = std::function<std::int64_t(std::int64_t index)>;

// Example indices per micro-batch for one epoch of `count` examples, seeded by (seed, epoch).
// Bucket batching sorts shuffled windows by length so a batch's examples have similar lengths.
BatchPlan plan_batches(std::int64_t count, const ExampleLength& length, int batch_size,
                       Padding padding, std::uint64_t seed, int epoch);

// One rank's part of an epoch's plan: the full micro-batches whose position modulo
// `world_size` is `rank`, the same number on every rank (the short batch and the remainder
// are left out, as DistributedSampler's drop_last does). Disjoint across ranks.
BatchPlan shard_plan(BatchPlan plan, int batch_size, int rank, int world_size);

// The padded length of a batch: max_len for fixed padding, else its longest example.
std::int64_t padded_length(const ExampleLength& length, const std::vector<std::int64_t>& batch,
                           Padding padding, int max_len);

// The micro-batches the first rank of a run trains, as the training loop walks the plans
// (epochs from 1; train.max_steps optimizer steps of train.accumulation micro-batches, or
// train.epochs whole epochs), before any OOM policy changes them. A run of more than about
// 20 million examples in all is assumed to draw its worst batch.
struct RunBatches {
    int longest = 1;  // the longest padded micro-batch among them
    // The longest any micro-batch of an epoch can be: max_len (fixed padding), else the
    // longest example. `longest` is less when the run never draws that batch.
    int worst = 1;
    // Each length the longest micro-batch so far grows to, in the order the run draws them
    // (the last is `longest`): where the caching allocator may have to open segments.
    std::vector<int> growth;
};
RunBatches run_batches(const ExperimentConfig& config, const std::vector<int>& lengths,
                       int world_size);

}  // namespace oomlab::prepare
