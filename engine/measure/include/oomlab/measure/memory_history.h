// debug.memory_snapshot: records the device allocator's history while it lives and gives the
// snapshot memory_viz opens. CUDA: the caching allocator's own history; CPU: the tracking
// allocator's.
#pragma once

#include <c10/core/Device.h>

#include "oomlab/snapshot_writer/memory_snapshot.h"

namespace oomlab::memory {

class MemoryHistory {
public:
    explicit MemoryHistory(const c10::Device& device);  // starts recording
    ~MemoryHistory();                                   // stops and drops the history
    MemoryHistory(const MemoryHistory&) = delete;
    MemoryHistory& operator=(const MemoryHistory&) = delete;

    MemorySnapshot snapshot() const;

private:
    c10::Device m_device;
};

}  // namespace oomlab::memory
