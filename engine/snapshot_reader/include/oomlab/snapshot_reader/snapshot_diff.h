// Two memory snapshots side by side (before and after a fix): for each device, the peak
// allocated and reserved, and what was alive at the peak by kind and by source line, with what
// changed most first.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "oomlab/snapshot_reader/snapshot_report.h"

namespace oomlab {

struct SnapshotChange {
    std::string where;  // a kind ("forward") or a source line
    std::int64_t before = 0;
    std::int64_t after = 0;
    std::int64_t change() const { return after - before; }
};

struct SnapshotDeviceDiff {
    int index = 0;
    std::int64_t peak_before = 0;  // allocated at the peak
    std::int64_t peak_after = 0;
    std::int64_t reserved_before = 0;  // reserved at that moment
    std::int64_t reserved_after = 0;
    std::int64_t most_reserved_before = 0;  // over the whole trace
    std::int64_t most_reserved_after = 0;
    std::vector<SnapshotChange> kinds;  // largest change first
    std::vector<SnapshotChange> lines;  // likewise; unchanged ones left out
    // When the figures above are taken: "the peak", "the dump" where neither file holds a
    // trace of events, "the peak or the dump" where one does (peak_moment, each side's).
    std::string moment = "the peak";
};

// Devices matched by index; one only in `after` (or `before`) has zeros on the other side.
std::vector<SnapshotDeviceDiff> diff_snapshots(const SnapshotReport& before,
                                               const SnapshotReport& after);

// As `snapshot diff --json` writes it (one line).
std::string snapshot_diff_json(const SnapshotReport& before, const SnapshotReport& after);

}  // namespace oomlab
