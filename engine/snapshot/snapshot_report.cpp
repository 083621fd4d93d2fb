#include "oomlab/snapshot/snapshot_report.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "oomlab/common/errors.h"
#include "oomlab/common/files.h"
#include "oomlab/snapshot/snapshot_advice.h"
#include "snapshot/pickle_reader.h"

namespace oomlab {
namespace {

using snapshot::PickleValue;

// Snapshots of long runs reach hundreds of megabytes; past this the file is not one.
constexpr std::uint64_t kMostSnapshotBytes = std::uint64_t(4) << 30;
constexpr std::size_t kLinesShown = 10;
constexpr std::size_t kTimelinePoints = 2000;

const PickleValue::List& list_at(const PickleValue& value, std::string_view key) {
    static const PickleValue::List kNone;
    const PickleValue* item = value.at(key);
    const PickleValue::List* list = item ? item->list() : nullptr;
    return list ? *list : kNone;
}

const std::string& text_at(const PickleValue& value, std::string_view key) {
    static const std::string kNone;
    const PickleValue* item = value.at(key);
    const std::string* text = item ? item->text() : nullptr;
    return text ? *text : kNone;
}

std::int64_t integer_at(const PickleValue& value, std::string_view key) {
    const PickleValue* item = value.at(key);
    return item ? item->integer() : 0;
}

bool ends_with(const std::string& text, std::string_view end) {
    return text.size() >= end.size() &&
           text.compare(text.size() - end.size(), end.size(), end) == 0;
}

// The user's own source line in an allocation's frames, as memory_viz's "filter frames" shows
// it: the first Python frame outside torch itself (C++ frames and torch's folded), else the
// engine's category, else a note that none was recorded.
std::string user_line(const PickleValue& event) {
    const PickleValue* first_python = nullptr;
    const auto where = [](const PickleValue& frame) {
        return text_at(frame, "filename") + ":" + std::to_string(integer_at(frame, "line")) + " (" +
               text_at(frame, "name") + ")";
    };
    for (const auto& frame : list_at(event, "frames")) {
        const std::string* file = &text_at(*frame, "filename");
        if (*file == "oomlab") {
            return "oomlab: " + text_at(*frame, "name");
        }
        if (!ends_with(*file, ".py")) {
            continue;
        }
        if (file->find("/torch/") == std::string::npos) {
            return where(*frame);
        }
        first_python = first_python ? first_python : frame.get();
    }
    return first_python ? where(*first_python) : "(no Python frame recorded)";
}

bool contains(const std::string& text, std::string_view part) {
    return text.find(part) != std::string::npos;
}

// What an allocation was for, as far as its frames tell: the engine's own tag, else PyTorch's
// autograd engine or backward() (backward), torch.optim (optimizer step), a copy between
// devices or dtypes (data transfer), a module's forward (forward); the first that applies in
// that order, else "other".
std::string kind_of(const PickleValue& event) {
    bool backward = false;
    bool optimizer = false;
    bool transfer = false;
    bool forward = false;
    for (const auto& frame : list_at(event, "frames")) {
        const std::string& file = text_at(*frame, "filename");
        const std::string& name = text_at(*frame, "name");
        if (file == "oomlab") {
            const std::string phase = name.substr(0, name.find(':'));
            return phase == "gradients"   ? "backward"
                   : phase == "optimizer" ? "optimizer step"
                   : phase == "data"      ? "data transfer"
                                          : phase;
        }
        const bool torch_python = ends_with(file, ".py") && contains(file, "/torch/");
        backward |= contains(name, "autograd::Engine") || (torch_python && name == "backward");
        optimizer |= contains(file, "/torch/optim/");
        transfer |= contains(name, "_to_copy") || contains(name, "copy_");
        forward |= ends_with(file, ".py") && name == "forward";
    }
    return backward    ? "backward"
           : optimizer ? "optimizer step"
           : transfer  ? "data transfer"
           : forward   ? "forward"
                       : "other";
}

SnapshotDevice& device_numbered(SnapshotReport& report, int index) {
    for (SnapshotDevice& device : report.devices) {
        if (device.index == index) {
            return device;
        }
    }
    SnapshotDevice& device = report.devices.emplace_back();
    device.index = index;
    return device;
}

void read_segments(SnapshotReport& report, const PickleValue& root) {
    for (const auto& segment : list_at(root, "segments")) {
        SnapshotDevice& device = device_numbered(report, int(integer_at(*segment, "device")));
        ++device.segments;
        device.reserved += integer_at(*segment, "total_size");
        for (const auto& block : list_at(*segment, "blocks")) {
            const std::string& state = text_at(*block, "state");
            const std::int64_t size = integer_at(*block, "size");
            if (state == "active_allocated") {
                device.allocated += size;
            } else if (state == "inactive") {
                device.cached_free += size;
                device.largest_free_block = std::max(device.largest_free_block, size);
            }
        }
    }
}

// Groups what is alive by name (source line or kind), largest first; what was allocated
// before the trace began under a line of its own.
std::vector<SnapshotLine> grouped(const std::vector<std::string>& names,
                                  const std::map<std::uint32_t, SnapshotLine>& groups,
                                  std::int64_t before_trace) {
    std::vector<SnapshotLine> list;
    for (const auto& [name, group] : groups) {
        list.push_back(group);
        list.back().where = names[name];
    }
    if (before_trace > 0) {
        list.push_back({kAllocatedBeforeTrace, before_trace, 0});
    }
    std::sort(list.begin(), list.end(),
              [](const SnapshotLine& a, const SnapshotLine& b) { return a.bytes > b.bytes; });
    list.resize(std::min(list.size(), kLinesShown));
    return list;
}

// Replays a device's trace from the state at its start (the end state less what the trace
// did): allocated and reserved at each event, the peak, and every change kept for
// snapshot_moment().
void replay(SnapshotDevice& device, const PickleValue::List& trace) {
    using What = SnapshotTraceChange::What;
    device.events = trace.size();
    std::unordered_map<std::string, std::uint32_t> ids;
    const auto id_of = [&](std::string name) {
        const auto [at, added] = ids.emplace(name, std::uint32_t(device.names.size()));
        if (added) {
            device.names.push_back(std::move(name));
        }
        return at->second;
    };
    std::unordered_map<const PickleValue*, std::pair<std::uint32_t, std::uint32_t>> by_frames;
    std::int64_t net_allocated = 0;
    std::int64_t net_reserved = 0;
    for (std::size_t i = 0; i < trace.size(); ++i) {
        const PickleValue& event = *trace[i];
        const std::string& action = text_at(event, "action");
        SnapshotTraceChange change{i, integer_at(event, "addr"), integer_at(event, "size")};
        if (action == "alloc") {
            // PyTorch's pickles share one list of frames among the events with the same stack.
            const auto [named, added] = by_frames.try_emplace(event.at("frames"));
            if (added) {
                named->second = {id_of(user_line(event)), id_of(kind_of(event))};
            }
            std::tie(change.line, change.kind) = named->second;
            net_allocated += change.size;
        } else if (action == "free_completed") {
            change.what = What::Free;
            net_allocated -= change.size;
        } else if (action == "segment_alloc" || action == "segment_map") {
            change.what = What::Reserve;
            net_reserved += change.size;
        } else if (action == "segment_free" || action == "segment_unmap") {
            change.what = What::Release;
            net_reserved -= change.size;
        } else {
            if (action == "oom") {
                device.ooms.push_back({i, change.size, integer_at(event, "device_free")});
            }
            continue;
        }
        device.changes.push_back(change);
    }
    std::int64_t allocated = device.allocated - net_allocated;
    std::int64_t reserved = device.reserved - net_reserved;
    device.peak_allocated = allocated;
    device.peak_reserved = reserved;
    device.reserved_at_peak = reserved;
    device.peak_event = 0;
    // A timeline of at most about kTimelinePoints points (every event of a short trace), the
    // peak and every out-of-memory event among them.
    const std::size_t stride = std::max<std::size_t>(1, trace.size() / kTimelinePoints);
    device.timeline.push_back({0, allocated, reserved});
    auto change = device.changes.begin();
    auto oom = device.ooms.begin();
    for (std::size_t i = 0; i < trace.size(); ++i) {
        for (; change != device.changes.end() && change->event == i; ++change) {
            allocated += change->what == What::Alloc  ? change->size
                         : change->what == What::Free ? -change->size
                                                      : 0;
            reserved += change->what == What::Reserve   ? change->size
                        : change->what == What::Release ? -change->size
                                                        : 0;
        }
        const bool out_of_memory = oom != device.ooms.end() && oom->event == i;
        if (out_of_memory) {
            oom->allocated = allocated;
            oom->reserved = reserved;
            ++oom;
        }
        if (allocated > device.peak_allocated) {
            device.peak_allocated = allocated;
            device.reserved_at_peak = reserved;
            device.peak_event = i + 1;
        }
        if ((i + 1) % stride == 0 || i + 1 == trace.size() || out_of_memory) {
            device.timeline.push_back({i + 1, allocated, reserved});
        }
        device.peak_reserved = std::max(device.peak_reserved, reserved);
    }
    const SnapshotPoint peak{device.peak_event, device.peak_allocated, device.reserved_at_peak};
    const auto at = std::lower_bound(
        device.timeline.begin(), device.timeline.end(), peak,
        [](const SnapshotPoint& a, const SnapshotPoint& b) { return a.event < b.event; });
    if (at == device.timeline.end() || at->event != peak.event) {
        device.timeline.insert(at, peak);
    }
    if (trace.empty()) {
        device.peak_allocated = device.allocated;
        device.peak_reserved = device.reserved;
        device.reserved_at_peak = device.reserved;
    }
}

}  // namespace

SnapshotReport snapshot_report_from_bytes(const std::string& bytes, const std::string& source) {
    const snapshot::PickleRef root = snapshot::read_pickle(bytes, source);
    if (!root->dict() || (!root->at("segments") && !root->at("device_traces"))) {
        throw BadInput(source +
                       ": a pickle, but not a memory snapshot (no \"segments\" or "
                       "\"device_traces\"); write one with "
                       "torch.cuda.memory._dump_snapshot(\"x.pickle\")");
    }
    SnapshotReport report;
    report.source = source;
    read_segments(report, *root);
    const PickleValue::List& traces = list_at(*root, "device_traces");
    for (std::size_t index = 0; index < traces.size(); ++index) {
        const PickleValue::List* trace = traces[index]->list();
        if (trace && !trace->empty()) {
            device_numbered(report, int(index));
        }
    }
    for (SnapshotDevice& device : report.devices) {
        const std::size_t at = std::size_t(device.index);
        const PickleValue::List* trace = at < traces.size() ? traces[at]->list() : nullptr;
        static const PickleValue::List kNone;
        replay(device, trace ? *trace : kNone);
        SnapshotMoment peak = snapshot_moment(device, device.peak_event);
        device.at_peak = std::move(peak.by_line);
        device.at_peak_by_kind = std::move(peak.by_kind);
    }
    std::sort(report.devices.begin(), report.devices.end(),
              [](const SnapshotDevice& a, const SnapshotDevice& b) { return a.index < b.index; });
    return report;
}

SnapshotMoment snapshot_moment(const SnapshotDevice& device, std::size_t event) {
    using What = SnapshotTraceChange::What;
    SnapshotMoment moment;
    moment.event = std::min(event, device.events);
    if (device.timeline.empty()) {  // no replay: the end state, with nothing traced
        moment.allocated = device.allocated;
        moment.reserved = device.reserved;
        moment.by_line = moment.by_kind = grouped({}, {}, device.allocated);
        return moment;
    }
    moment.allocated = device.timeline.front().allocated;
    moment.reserved = device.timeline.front().reserved;
    std::unordered_map<std::int64_t, const SnapshotTraceChange*> alive;
    for (const SnapshotTraceChange& change : device.changes) {
        if (change.event >= moment.event) {
            break;
        }
        switch (change.what) {
            case What::Alloc:
                moment.allocated += change.size;
                alive[change.address] = &change;
                break;
            case What::Free:
                moment.allocated -= change.size;
                alive.erase(change.address);
                break;
            case What::Reserve:
                moment.reserved += change.size;
                break;
            case What::Release:
                moment.reserved -= change.size;
                break;
        }
    }
    std::map<std::uint32_t, SnapshotLine> lines;
    std::map<std::uint32_t, SnapshotLine> kinds;
    std::int64_t traced = 0;
    for (const auto& [address, change] : alive) {
        for (SnapshotLine* group : {&lines[change->line], &kinds[change->kind]}) {
            group->bytes += change->size;
            ++group->blocks;
        }
        traced += change->size;
    }
    moment.by_line = grouped(device.names, lines, moment.allocated - traced);
    moment.by_kind = grouped(device.names, kinds, moment.allocated - traced);
    return moment;
}

SnapshotReport read_snapshot_report(const std::string& path) {
    return snapshot_report_from_bytes(read_input_file(path, "memory snapshot", kMostSnapshotBytes),
                                      path);
}

std::string snapshot_report_json(const SnapshotReport& report, std::optional<std::size_t> at) {
    using Json = nlohmann::ordered_json;
    const auto groups = [](const std::vector<SnapshotLine>& from, const char* name) {
        Json list = Json::array();
        for (const SnapshotLine& group : from) {
            list.push_back({{name, group.where}, {"bytes", group.bytes}, {"blocks", group.blocks}});
        }
        return list;
    };
    Json devices = Json::array();
    for (const SnapshotDevice& d : report.devices) {
        Json ooms = Json::array();
        for (const SnapshotOom& oom : d.ooms) {
            ooms.push_back({{"event", oom.event},
                            {"requested_bytes", oom.requested},
                            {"device_free_bytes", oom.device_free},
                            {"allocated_bytes", oom.allocated},
                            {"reserved_bytes", oom.reserved}});
        }
        Json advice = Json::array();
        for (const SnapshotAdvice& item : snapshot_advice(d)) {
            advice.push_back({{"what", item.what}, {"why", item.why}});
        }
        devices.push_back({{"device", d.index},
                           {"segments", d.segments},
                           {"reserved_bytes", d.reserved},
                           {"allocated_bytes", d.allocated},
                           {"cached_free_bytes", d.cached_free},
                           {"largest_free_block", d.largest_free_block},
                           {"events", d.events},
                           {"peak_allocated_bytes", d.peak_allocated},
                           {"peak_reserved_bytes", d.peak_reserved},
                           {"peak_event", d.peak_event},
                           {"reserved_at_peak_bytes", d.reserved_at_peak},
                           {"at_peak", groups(d.at_peak, "where")},
                           {"at_peak_by_kind", groups(d.at_peak_by_kind, "kind")},
                           {"ooms", ooms},
                           {"advice", advice}});
        if (at) {
            const SnapshotMoment moment = snapshot_moment(d, *at);
            devices.back()["at_event"] = {{"event", moment.event},
                                          {"allocated_bytes", moment.allocated},
                                          {"reserved_bytes", moment.reserved},
                                          {"by_kind", groups(moment.by_kind, "kind")},
                                          {"by_line", groups(moment.by_line, "where")}};
        }
    }
    return Json{{"source", report.source}, {"devices", devices}}.dump(
        -1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace oomlab
