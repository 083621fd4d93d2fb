// What snapshot_advice.cpp shares with the advice made in files of their own: the host's
// memory (snapshot_host_advice.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "oomlab/snapshot_reader/snapshot_advice.h"
#include "oomlab/snapshot_reader/snapshot_report.h"

namespace oomlab {

inline constexpr double kLineShare = 0.25;  // a line that holds this much of the peak is named

// "42%", rounded; "0%" of nothing.
std::string percent_of(std::int64_t part, std::int64_t whole);

// Pinned host memory (PyTorch's host allocator's), and a GPU program's host memory (its
// profile's CPU): the machine's RAM, which none of the GPU's advice reaches.
void advise_on_pinned_host(const SnapshotDevice& device, std::vector<SnapshotAdvice>& advice);
void advise_on_host_of_gpu_run(const SnapshotDevice& device, std::vector<SnapshotAdvice>& advice);

}  // namespace oomlab
