// What the caching allocator reserves for the predicted run: the steps' tensors, one request
// each, made and freed in the order the engine makes and frees them, replayed through the
// allocator model (engine/allocator) under the run's memory.alloc_conf and cap. Each step given
// is replayed in order, and the last two more times, so the cache the first ones leave behind
// (the optimizer's state is made at the first update, a shorter batch's blocks) is in the
// figures.
#pragma once

#include <cstdint>
#include <vector>

#include "step_phases.h"

namespace oomlab::estimator {

struct ReservedReplay {
    std::int64_t allocated_peak = 0;  // the replay's own peak of tensors
    std::int64_t cache_at_peak = 0;   // reserved but not allocated at that moment
    std::int64_t reserved_peak = 0;   // the most it reserved
    // A request the cap refused even after the cache was released: the run ends out of memory
    // although its tensors alone would fit, when allocated_peak is under the cap.
    bool out_of_memory = false;
};

// `steps`: one or more, the last the longest. `capacity`: what the allocator may reserve
// (memory.cap_mb; 0 = no limit). `workspaces`: CUDA libraries' buffers, made at the first step
// and kept.
ReservedReplay replay_reserved(const std::vector<Step>& steps, std::int64_t capacity,
                               std::int64_t workspaces = 0);

}  // namespace oomlab::estimator
