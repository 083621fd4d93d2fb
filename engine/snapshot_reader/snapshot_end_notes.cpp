// The end state's rounding and pools in words, for `snapshot show` and the snapshot window.
#include <string>
#include <vector>

#include "oomlab/common/format.h"
#include "oomlab/snapshot_reader/snapshot_report.h"

namespace oomlab {
namespace {

std::string pool_words(const SnapshotPool& pool) {
    const std::string id = "(" + std::to_string(pool.owner) + ", " + std::to_string(pool.id) + ")";
    return id + (pool.owner == 0 && pool.id == 0 ? " the default pool" : " a private pool") + ": " +
           std::to_string(pool.segments) + (pool.segments == 1 ? " segment, " : " segments, ") +
           format_bytes(pool.reserved) + " reserved, " + format_bytes(pool.allocated) +
           " allocated";
}

}  // namespace

std::vector<std::string> snapshot_end_notes(const SnapshotDevice& device) {
    std::vector<std::string> notes;
    if (device.requested >= 0 && device.requested < device.allocated) {
        notes.push_back("of the " + format_bytes(device.allocated) +
                        " allocated at the end, the program asked for " +
                        format_bytes(device.requested) + ": " +
                        format_bytes(device.allocated - device.requested) +
                        " is the allocator's rounding of requests up to its block sizes");
    }
    if (device.pools.size() > 1) {
        std::string text =
            "by memory pool (a private pool, a CUDA graph's or a "
            "torch.cuda.MemPool's, serves only its own requests): ";
        for (std::size_t i = 0; i < device.pools.size(); ++i) {
            text += (i ? "; " : "") + pool_words(device.pools[i]);
        }
        notes.push_back(text);
    }
    return notes;
}

}  // namespace oomlab
