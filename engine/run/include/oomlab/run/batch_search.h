// What a search for the largest micro-batch found: each trial and the answer. Value types,
// shared by the search, the worker processes that report it and the front ends that show it.
#pragma once

#include <cstdint>
#include <vector>

namespace oomlab {

struct BatchTrial {
    int batch_size = 0;
    bool fits = false;
    std::int64_t peak_bytes = 0;  // measured
    std::int64_t predicted_bytes = 0;
};

struct BatchSizeSearch {
    int batch_size = 0;  // 0: not even a batch of one fits
    int predicted = 0;   // the estimator's answer, where the search started
    std::int64_t cap_bytes = 0;
    std::vector<BatchTrial> trials;
};

}  // namespace oomlab
