// Predicts a run's memory by category, before any run, from the config, the data's shape and
// the model's shapes: parameters, gradients, optimizer state, data, activations (with
// precision, checkpointing, accumulation and padding), and the peak.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "oomlab/config/experiment_config.h"
#include "oomlab/memory/breakdown.h"

namespace oomlab {

// What the estimator needs to know about the data, without tensors.
struct DataProfile {
    std::int64_t train_examples = 0;
    std::int64_t valid_examples = 0;
    int num_classes = 2;
    std::int64_t vocab_rows = 0;  // rows of the embedding table
    int embedding_dim = 0;
    int longest = 1;              // tokens of the longest example after max_len
    double mean_length = 1;       // after max_len
    std::vector<int> lengths;     // every training example's length after max_len
};

struct MemoryEstimate {
    MemoryBreakdown breakdown;    // at the predicted peak
    std::int64_t peak_bytes = 0;  // what the allocator must hold at the worst step
    std::int64_t cap_bytes = 0;   // memory.cap_mb in bytes; 0 = none
    bool fits = true;             // peak_bytes <= cap_bytes (or no cap)
    int worst_batch_length = 1;   // padded length of the worst micro-batch assumed
};

MemoryEstimate estimate_memory(const ExperimentConfig& config, const DataProfile& profile);

// Reads the dataset and the vectors' shape for `config` (no training, no tensors); throws
// BadInput like Experiment::prepare.
DataProfile profile_data(const ExperimentConfig& config);

}  // namespace oomlab
