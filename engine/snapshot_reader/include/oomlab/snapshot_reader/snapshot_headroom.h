// How close a program came to running out of memory on a device of a given size
// (`snapshot show --device-memory`, the snapshot window's replay box): the moment it reserved
// the most and what the device had left then, as it ran and as the allocator's model replays
// the same requests under other settings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "oomlab/snapshot_reader/snapshot_report.h"

namespace oomlab {

struct HeadroomRow {
    std::string how;  // "as it ran, on its own device", "replayed under expandable_segments:True"
    std::int64_t most_reserved = 0;
    std::size_t event = 0;  // after this many of the trace's events it first reserved that
    std::int64_t left = 0;  // the device's memory less that; below zero: short by that much
    // Replays under a device of that size: the first allocation it could not hold.
    std::optional<std::size_t> first_failure;
};

struct SnapshotHeadroom {
    int device = 0;
    std::int64_t device_memory = 0;
    // As it ran first (where the file records what was reserved), then each replay.
    std::vector<HeadroomRow> rows;
};

// For each device: as it ran (its trace's most reserved, else its reserved at the end), and,
// with a trace, replayed on a device of that size under the recorded settings and with
// expandable segments where the program had them off.
std::vector<SnapshotHeadroom> snapshot_headroom(const SnapshotReport& report,
                                                std::int64_t device_memory);
std::string snapshot_headroom_text(const std::vector<SnapshotHeadroom>& headroom);
// One row in words: "1.20 GiB left at the closest, after event 812 with 78.80 GiB reserved",
// or "short by ...".
std::string headroom_words(const HeadroomRow& row);
std::string snapshot_headroom_json(const std::vector<SnapshotHeadroom>& headroom);

}  // namespace oomlab
