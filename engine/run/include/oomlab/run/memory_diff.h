// Two runs side by side at their peaks: what differs, per category of the breakdown and per
// module and kind of memory, largest difference first. "Why does B use 300 MiB more?"
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "oomlab/run/run_record.h"

namespace oomlab {

struct MemoryDifference {
    std::string
        category;        // a kBreakdownKeys entry, or "parameters", "activations", ... of a module
    std::string module;  // empty for the breakdown's categories
    std::int64_t a_bytes = 0;
    std::int64_t b_bytes = 0;
    std::int64_t difference() const { return b_bytes - a_bytes; }
};

struct MemoryDiff {
    std::int64_t a_peak = 0;
    std::int64_t b_peak = 0;
    // The breakdown, largest |difference| first: the categories in the peak, then those
    // beside it (allocator cache, process memory).
    std::vector<MemoryDifference> by_category;
    std::vector<MemoryDifference> by_module;  // module x kind, largest |difference| first
    // Why categories are not compared: a run that ended before recording its breakdown has
    // only its peak, and its zeros are never differences.
    std::vector<std::string> notes;
};

// Rows equal in both runs are left out. Modules only one run has count 0 in the other.
MemoryDiff diff_memory(const RunOutcome& a, const RunOutcome& b);

// As `runs diff --json` writes it: {"a_peak_bytes", "b_peak_bytes", "by_category": [...],
// "by_module": [...], "notes": [...]}, each row {"category", "module", "a_bytes", "b_bytes",
// "difference"}.
std::string memory_diff_json(const MemoryDiff& diff);

}  // namespace oomlab
