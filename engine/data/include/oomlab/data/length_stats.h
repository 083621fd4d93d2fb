// Token-length statistics of a dataset: what the memory estimator needs to size padded
// batches (the longest example sets a batch's width unless sequences are truncated).
#pragma once

#include <cstddef>
#include <vector>

#include "oomlab/data/dataset.h"
#include "oomlab/data/tokenizer.h"

namespace oomlab {

struct LengthStats {
    std::size_t count = 0;  // examples
    std::size_t total_tokens = 0;
    double mean = 0.0;
    std::size_t min = 0;
    std::size_t max = 0;
    std::size_t p50 = 0;  // nearest-rank percentiles
    std::size_t p90 = 0;
    std::size_t p95 = 0;
    std::size_t p99 = 0;
};

// Statistics of the given lengths (all zeros when empty).
LengthStats length_stats(std::vector<std::size_t> lengths);

// The token count of every example under `options`, then length_stats.
LengthStats token_length_stats(const std::vector<Example>& examples,
                               const TokenizerOptions& options = {});

// The nearest-rank percentile (0..100) of ascending `sorted` lengths; 0 when empty.
std::size_t length_percentile(const std::vector<std::size_t>& sorted, double percent);

}  // namespace oomlab
