// What to change, with the reason, from what a memory snapshot shows: fragmentation of the
// allocator's cache, a smaller batch that would have fitted, mixed precision or checkpointing
// where forward's saved tensors dominate, the source lines that hold the most at the peak, a
// history that began too late to name them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "oomlab/snapshot_reader/snapshot_report.h"

namespace oomlab {

struct SnapshotAdvice {
    std::string what;  // the change: "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
    std::string why;   // the snapshot's figures that call for it
};

// Most telling first. An out-of-memory event decides between fragmentation (the cache held
// more than was asked, in pieces too small) and memory really in use. An allocator setting is
// advised only after the trace, replayed through the allocator's model with it, shows what it
// changes, and never one `alloc_conf` (the snapshot's recorded settings) already has.
std::vector<SnapshotAdvice> snapshot_advice(const SnapshotDevice& device,
                                            const std::optional<std::string>& alloc_conf);

}  // namespace oomlab
