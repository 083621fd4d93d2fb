// Metric rows as the engine sends them to the live plots, for the plot tests.
#pragma once

#include <cstdint>

#include "oomlab/store/run_store.h"

namespace oomlab::ui::test {

// A row of `phase` at `step` holding `allocatedMiB` (reserved 2 MiB more, its peak 5 more).
inline MetricRow sample(std::int64_t step, const char* phase, double wallMs,
                        std::int64_t allocatedMiB) {
    MetricRow row;
    row.step = step;
    row.phase = phase;
    row.wall_ms = wallMs;
    row.allocated_bytes = allocatedMiB << 20;
    row.reserved_bytes = (allocatedMiB + 2) << 20;
    row.peak_bytes = (allocatedMiB + 5) << 20;
    row.device_used_bytes = 500LL << 20;
    return row;
}

inline MetricRow lossRow(std::int64_t step, double loss) {
    MetricRow row = sample(step, "step", static_cast<double>(step), 10);
    row.loss = loss;
    return row;
}

}  // namespace oomlab::ui::test
