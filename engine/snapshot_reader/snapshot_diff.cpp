#include "oomlab/snapshot_reader/snapshot_diff.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include <nlohmann/json.hpp>

namespace oomlab {
namespace {

const SnapshotDevice* device_numbered(const SnapshotReport& report, int index) {
    for (const SnapshotDevice& device : report.devices) {
        if (device.index == index) {
            return &device;
        }
    }
    return nullptr;
}

std::vector<SnapshotChange> changes(const std::vector<SnapshotLine>* before,
                                    const std::vector<SnapshotLine>* after) {
    std::map<std::string, SnapshotChange> by_name;
    for (const SnapshotLine& line : before ? *before : std::vector<SnapshotLine>{}) {
        by_name[line.where].before = line.bytes;
    }
    for (const SnapshotLine& line : after ? *after : std::vector<SnapshotLine>{}) {
        by_name[line.where].after = line.bytes;
    }
    std::vector<SnapshotChange> list;
    for (auto& [where, change] : by_name) {
        change.where = where;
        if (change.change() != 0) {
            list.push_back(change);
        }
    }
    std::stable_sort(list.begin(), list.end(), [](const auto& a, const auto& b) {
        return std::llabs(a.change()) > std::llabs(b.change());
    });
    return list;
}

}  // namespace

std::vector<SnapshotDeviceDiff> diff_snapshots(const SnapshotReport& before,
                                               const SnapshotReport& after) {
    std::vector<int> indices;
    for (const SnapshotReport* report : {&before, &after}) {
        for (const SnapshotDevice& device : report->devices) {
            if (std::find(indices.begin(), indices.end(), device.index) == indices.end()) {
                indices.push_back(device.index);
            }
        }
    }
    std::sort(indices.begin(), indices.end());
    std::vector<SnapshotDeviceDiff> diffs;
    for (const int index : indices) {
        const SnapshotDevice* a = device_numbered(before, index);
        const SnapshotDevice* b = device_numbered(after, index);
        SnapshotDeviceDiff diff;
        diff.index = index;
        diff.peak_before = a ? a->peak_allocated : 0;
        diff.peak_after = b ? b->peak_allocated : 0;
        diff.reserved_before = a ? a->reserved_at_peak : 0;
        diff.reserved_after = b ? b->reserved_at_peak : 0;
        diff.most_reserved_before = a ? a->peak_reserved : 0;
        diff.most_reserved_after = b ? b->peak_reserved : 0;
        diff.kinds = changes(a ? &a->at_peak_by_kind : nullptr, b ? &b->at_peak_by_kind : nullptr);
        diff.lines = changes(a ? &a->at_peak : nullptr, b ? &b->at_peak : nullptr);
        const std::string moment_before = a ? peak_moment(*a) : peak_moment(*b);
        const std::string moment_after = b ? peak_moment(*b) : moment_before;
        diff.moment =
            moment_before == moment_after ? moment_after : std::string("the peak or the dump");
        diffs.push_back(std::move(diff));
    }
    return diffs;
}

std::string snapshot_diff_json(const SnapshotReport& before, const SnapshotReport& after) {
    using Json = nlohmann::ordered_json;
    const auto listed = [](const std::vector<SnapshotChange>& list) {
        Json items = Json::array();
        for (const SnapshotChange& change : list) {
            items.push_back({{"where", change.where},
                             {"before_bytes", change.before},
                             {"after_bytes", change.after},
                             {"change_bytes", change.change()}});
        }
        return items;
    };
    Json devices = Json::array();
    for (const SnapshotDeviceDiff& diff : diff_snapshots(before, after)) {
        devices.push_back({{"device", diff.index},
                           {"moment", diff.moment},
                           {"peak_allocated_before_bytes", diff.peak_before},
                           {"peak_allocated_after_bytes", diff.peak_after},
                           {"reserved_at_peak_before_bytes", diff.reserved_before},
                           {"reserved_at_peak_after_bytes", diff.reserved_after},
                           {"most_reserved_before_bytes", diff.most_reserved_before},
                           {"most_reserved_after_bytes", diff.most_reserved_after},
                           {"by_kind", listed(diff.kinds)},
                           {"by_line", listed(diff.lines)}});
    }
    return Json{{"before", before.source}, {"after", after.source}, {"devices", devices}}.dump(
        -1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace oomlab
