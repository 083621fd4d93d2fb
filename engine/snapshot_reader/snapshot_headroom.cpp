#include "oomlab/snapshot_reader/snapshot_headroom.h"

#include <algorithm>
#include <sstream>

#include <nlohmann/json.hpp>

#include "oomlab/allocator/allocator_settings.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/format.h"
#include "oomlab/snapshot_reader/snapshot_whatif.h"

namespace oomlab {
namespace {

constexpr const char* kExpandableOn = "expandable_segments:True";

// `unseen`: what the program reserved that the replay of its trace does not account for (a
// trace begun late), added to what the replay reserves: the device held it all the same.
HeadroomRow replay_row(const std::string& how, const allocator::WhatIf& replay,
                       std::int64_t device_memory, std::int64_t unseen) {
    const std::int64_t most = replay.peak_reserved + unseen;
    return {how, most, event_number(replay.peak_event), device_memory - most,
            unseen > 0 ? std::nullopt : replay.first_over_capacity};
}

}  // namespace

std::vector<SnapshotHeadroom> snapshot_headroom(const SnapshotReport& report,
                                                std::int64_t device_memory) {
    const bool expandable_on =
        report.alloc_conf && allocator::expandable_segments_on(*report.alloc_conf);
    // The recorded settings with expandable segments added; where those are not valid (the
    // what-if says so), expandable segments alone.
    std::vector<SnapshotWhatIf> replays;
    const std::string recorded = report.alloc_conf.value_or("");
    try {
        replays = snapshot_whatif(report,
                                  expandable_on ? std::nullopt
                                  : recorded.empty()
                                      ? std::optional<std::string>(kExpandableOn)
                                      : std::optional<std::string>(recorded + "," + kExpandableOn),
                                  device_memory);
    } catch (const BadInput&) {
        replays = snapshot_whatif(report, std::string(kExpandableOn), device_memory);
    }
    std::vector<SnapshotHeadroom> headroom;
    for (const SnapshotDevice& device : report.devices) {
        if (!served_by_caching_allocator(device)) {
            continue;  // the profiler's CPU, or a profile's: no recorded run on a device
        }
        SnapshotHeadroom& one = headroom.emplace_back();
        one.device = device.index;
        one.device_memory = device_memory;
        if (device.reserved_recorded) {  // a trace before PyTorch 1.10 has no such figure
            one.rows.push_back({"as it ran, on its own device", device.peak_reserved,
                                device.peak_reserved_event, device_memory - device.peak_reserved,
                                std::nullopt});
        }
        for (const SnapshotWhatIf& replay : replays) {
            if (replay.device != device.index) {
                continue;
            }
            const std::int64_t unseen =
                replay.baseline_is_the_programs
                    ? 0
                    : std::max<std::int64_t>(
                          0, replay.program_peak_reserved - replay.recorded.peak_reserved);
            const std::string added = unseen > 0
                                          ? ", with the " + format_bytes(unseen) +
                                                " the program reserved that its trace does not show"
                                          : "";
            one.rows.push_back(replay_row(
                "replayed under " +
                    (!replay.settings_recorded ? "PyTorch's defaults (its own settings not known"
                     : replay.recorded_conf.empty()
                         ? std::string("the recorded settings (PyTorch's defaults")
                         : "the recorded settings (" + replay.recorded_conf) +
                    (replay.baseline_is_the_programs ? ""
                     : replay.program_reserved_recorded
                         ? "; the model's, not the program's"
                         : "; the model's: the trace records nothing the program reserved") +
                    added + ")",
                replay.recorded, device_memory, unseen));
            if (!expandable_on) {
                one.rows.push_back(replay_row("replayed under " + replay.conf + added,
                                              replay.replayed, device_memory, unseen));
            }
        }
    }
    return headroom;
}

std::string snapshot_headroom_text(const std::vector<SnapshotHeadroom>& headroom) {
    std::ostringstream out;
    for (const SnapshotHeadroom& one : headroom) {
        out << snapshot_device_name(one.device) << " on a device of "
            << format_bytes(one.device_memory)
            << " (what PyTorch reserves only: the CUDA context and other processes take more):\n";
        for (const HeadroomRow& row : one.rows) {
            out << "  " << row.how << ": " << headroom_words(row) << "\n";
        }
    }
    return out.str();
}

std::string headroom_words(const HeadroomRow& row) {
    std::ostringstream out;
    if (row.first_failure) {
        out << "runs out of memory: the first allocation the device could not hold is at event "
            << event_number(*row.first_failure) << " (at most " << format_bytes(row.most_reserved)
            << " reserved)";
    } else if (row.left >= 0) {
        out << format_bytes(row.left) << " left at the closest, after event " << row.event
            << " with " << format_bytes(row.most_reserved) << " reserved";
    } else {
        out << "short by " << format_bytes(-row.left) << ": it reserved "
            << format_bytes(row.most_reserved) << " after event " << row.event;
    }
    return out.str();
}

std::string snapshot_headroom_json(const std::vector<SnapshotHeadroom>& headroom) {
    nlohmann::ordered_json devices = nlohmann::json::array();
    for (const SnapshotHeadroom& one : headroom) {
        nlohmann::ordered_json rows = nlohmann::json::array();
        for (const HeadroomRow& row : one.rows) {
            rows.push_back(
                {{"how", row.how},
                 {"most_reserved", row.most_reserved},
                 {"event", row.event},
                 {"left", row.left},
                 {"first_failure", row.first_failure ? nlohmann::ordered_json(*row.first_failure)
                                                     : nlohmann::ordered_json()}});
        }
        devices.push_back(
            {{"device", one.device}, {"device_memory", one.device_memory}, {"rows", rows}});
    }
    return devices.dump();
}

}  // namespace oomlab
