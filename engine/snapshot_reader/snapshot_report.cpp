#include "oomlab/snapshot_reader/snapshot_report.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "oomlab/allocator/allocator_settings.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/files.h"
#include "oomlab/common/format.h"
#include "pickle_reader.h"
#include "read_ahead.h"
#include "snapshot_alloc_conf.h"
#include "snapshot_fields.h"
#include "snapshot_file_kind.h"
#include "snapshot_frames.h"
#include "snapshot_input.h"
#include "snapshot_replay.h"
#include "snapshot_sink.h"
#include "snapshot_stages.h"
#include "tar_archive.h"

namespace oomlab {
namespace {

using snapshot::PickleContainer;
using snapshot::PickleValue;
using snapshot::text_at;
using Items = std::vector<PickleValue>;

// Snapshots of long runs reach gigabytes; past this the file is not one. A profiler's trace in
// UTF-16 is converted whole before it is parsed, so it is held to less.
constexpr std::uint64_t kMostSnapshotBytes = std::uint64_t(16) << 30;
constexpr std::uint64_t kMostTraceBytes = std::uint64_t(4) << 30;
constexpr std::int64_t kSmallSegment = 2 << 20;  // the small pool's segments

// The items a file makes the reader visit. A pickle may name one list from many places (one
// trace for a thousand devices, one list of blocks for every segment) at the cost of a
// reference each, so the work is counted where a list is used, and bounded by what a file of
// its size could hold written out (a snapshot's event or block takes twenty bytes or more).
class WorkBudget {
public:
    WorkBudget(const std::string& source, std::uint64_t file_bytes)
        : m_source(source),
          m_left(file_bytes / 4 + (std::uint64_t(1) << 20)),
          m_file_bytes(file_bytes) {}

    void spend(std::size_t items, const char* what) {
        if (items > m_left) {
            throw BadInput(m_source + ": its " + what + " name the same lists from many places (" +
                           format_bytes(std::int64_t(m_file_bytes)) +
                           " of pickle would make the reader visit more items than such a file "
                           "can hold written out): not a snapshot PyTorch wrote; dump it again "
                           "with torch.cuda.memory._dump_snapshot");
        }
        m_left -= items;
    }

private:
    const std::string& m_source;
    std::uint64_t m_left;
    std::uint64_t m_file_bytes;
};

class DeviceIndex {
public:
    explicit DeviceIndex(SnapshotReport& report) : m_report(report) {}

    SnapshotDevice& numbered(int index) {
        const auto [found, added] = m_at.try_emplace(index, m_report.devices.size());
        if (added) {
            m_report.devices.emplace_back().index = index;
        }
        return m_report.devices[found->second];
    }

private:
    SnapshotReport& m_report;
    std::unordered_map<int, std::size_t> m_at;
};

// The pool a segment belongs to (segment_pool_id: a pair, (0, 0) the default pool; absent
// before PyTorch 2.1, where every segment is the default pool's).
// Each device's pools by owner and id: a snapshot may name thousands (a CUDA graph's each), and
// a scan of them for each segment made reading quadratic (160,000 pools: 15.8 s).
using PoolIndex = std::map<std::tuple<int, std::int64_t, std::int64_t>, std::size_t>;

SnapshotPool& pool_of(SnapshotDevice& device, const PickleValue& segment, PoolIndex& index,
                      const snapshot::SnapshotFields& fields,
                      const snapshot::SnapshotFields::Where& where) {
    const auto [owner, id] =
        fields.pool_of(segment.at("segment_pool_id"), "segment_pool_id", where);
    const auto [known, added] =
        index.try_emplace(std::make_tuple(device.index, owner, id), device.pools.size());
    if (added) {
        SnapshotPool& pool = device.pools.emplace_back();
        pool.owner = owner;
        pool.id = id;
    }
    return device.pools[known->second];
}

// A segment's blocks: taken by the sink as they were read, or read here from their list.
std::vector<snapshot::SnapshotBlock> blocks_of(const PickleValue& segment,
                                               snapshot::SnapshotSink& sink,
                                               const snapshot::SnapshotFields& fields,
                                               const snapshot::SnapshotFields::Where& where) {
    const PickleValue* list = segment.at("blocks");
    if (list && list->list() && list->list()->sink_list != 0) {
        return sink.blocks(*list->list(), where);
    }
    const Items& blocks = fields.list(segment, "blocks", where);
    std::vector<snapshot::SnapshotBlock> read;
    for (std::size_t b = 0; b < blocks.size(); ++b) {
        read.push_back(snapshot::block_of(
            blocks[b], fields, [&] { return where() + ".blocks[" + std::to_string(b) + "]"; },
            sink.origins()));
    }
    return read;
}

// An allocated block at the end whose frames name where it was made.
struct OriginBlock {
    std::int64_t address = 0;
    std::int64_t size = 0;
    std::uint32_t origin = 0;  // in the sink's BlockOrigins
};
using OriginBlocks = std::unordered_map<int, std::vector<OriginBlock>>;  // by device

// Where a list of segments and its trace are, and whose they are: the CUDA devices' (each
// segment names its device) or the pinned host memory's.
struct SegmentsOf {
    const char* segments = "segments";
    std::optional<int> device;  // unset: each segment's "device"
};

// The segments at the end into their devices; returns the allocated blocks that carry frames.
OriginBlocks read_segments(DeviceIndex& devices, const Items& segments, const SegmentsOf& of,
                           WorkBudget& budget, snapshot::SnapshotSink& sink,
                           const snapshot::SnapshotFields& fields) {
    using State = snapshot::SnapshotBlock::State;
    OriginBlocks origin_blocks;
    std::unordered_set<int> unknown_requested;  // devices with a block that does not say
    PoolIndex pools;  // a call reads devices of its own (the GPUs', or the pinned host's)
    budget.spend(segments.size(), "segments");
    for (std::size_t s = 0; s < segments.size(); ++s) {
        const PickleValue& segment = segments[s];
        const auto where = [&] { return of.segments + ("[" + std::to_string(s) + "]"); };
        if (!segment.dict()) {
            fields.refuse(where,
                          "a segment is " + snapshot::kind_of_value(segment) + ", not a dict");
        }
        SnapshotDevice& device = devices.numbered(
            of.device ? *of.device : int(fields.whole(segment, "device", where, 0, INT_MAX)));
        ++device.segments;
        SnapshotSegmentLayout& layout = device.layout.emplace_back();
        layout.address = fields.whole(segment, "address", where, 0, INT64_MAX);
        layout.size = fields.bytes(segment, "total_size", where);
        layout.stream = fields.whole(segment, "stream", where, INT64_MIN, INT64_MAX);
        device.reserved = fields.add(device.reserved, layout.size, where);
        const PickleValue* expandable = segment.at("is_expandable");
        layout.expandable = expandable && expandable->integer() != 0;
        // "segment_type" since PyTorch 2.0; before it, the small pool's segments were the ones
        // of 2 MiB.
        const std::string& type = text_at(segment, "segment_type");
        layout.small =
            type.empty() ? layout.size == kSmallSegment && !layout.expandable : type == "small";
        SnapshotPool& pool = pool_of(device, segment, pools, fields, where);
        layout.pool = {pool.owner, pool.id};
        ++pool.segments;
        pool.reserved = fields.add(pool.reserved, layout.size, where);
        std::int64_t at = layout.address;
        std::int64_t held = 0;
        const std::vector<snapshot::SnapshotBlock> blocks = blocks_of(segment, sink, fields, where);
        budget.spend(blocks.size(), "segments' blocks");
        for (std::size_t b = 0; b < blocks.size(); ++b) {
            const snapshot::SnapshotBlock& block = blocks[b];
            const auto in_block = [&] { return where() + ".blocks[" + std::to_string(b) + "]"; };
            const std::int64_t size = block.size;
            // Older snapshots list blocks in order, without their addresses.
            at = block.address >= 0 ? block.address : at;
            layout.blocks.push_back({at, size, block.state == State::Allocated});
            at = fields.add(at - layout.address, size, in_block) + layout.address;
            held = fields.add(held, size, in_block);
            if (block.state == State::Allocated) {
                if (block.origin != snapshot::BlockOrigins::kNone) {
                    origin_blocks[device.index].push_back(
                        {layout.blocks.back().address, size, block.origin});
                }
                device.allocated = fields.add(device.allocated, size, in_block);
                pool.allocated = fields.add(pool.allocated, size, in_block);
                const std::int64_t requested = block.requested;
                if (requested < 0 || unknown_requested.count(device.index)) {
                    unknown_requested.insert(device.index);
                    device.requested = -1;
                } else {
                    device.requested = fields.add(std::max<std::int64_t>(device.requested, 0),
                                                  requested, in_block);
                }
            } else if (block.state == State::Inactive) {
                device.cached_free = fields.add(device.cached_free, size, in_block);
                device.largest_free_block = std::max(device.largest_free_block, size);
            } else if (block.state == State::PendingFree) {
                device.pending_free = fields.add(device.pending_free, size, in_block);
            }
        }
        if (held > layout.size) {
            fields.refuse(where, "its blocks hold " + format_bytes(held) + ", more than its " +
                                     "total_size of " + format_bytes(layout.size));
        }
    }
    return origin_blocks;
}

// The blocks alive at the end that the trace never allocated nor freed were allocated before
// it began and held throughout: where they carry frames, those name them.
void name_held_blocks(SnapshotDevice& device, const std::vector<OriginBlock>& blocks,
                      const snapshot::BlockOrigins& origins) {
    using What = SnapshotTraceChange::What;
    std::vector<std::int64_t> traced;
    for (const SnapshotTraceChange& change : device.changes) {
        if (change.what == What::Alloc || change.what == What::Free) {
            traced.push_back(change.address);
        }
    }
    std::sort(traced.begin(), traced.end());
    snapshot::NameTable names(device);
    for (const OriginBlock& block : blocks) {
        if (!std::binary_search(traced.begin(), traced.end(), block.address)) {
            const snapshot::BlockOrigins::Origin& origin = origins.at(block.origin);
            device.held_from_start.push_back({block.size, names.stack(origin.line, origin.kind)});
        }
    }
}

// Where a device's trace is in the snapshot: "device_traces[0]", "host_traces".
std::string trace_name(const SnapshotDevice& device) {
    return device.index == kPinnedHostIndex ? "host_traces"
                                            : "device_traces[" + std::to_string(device.index) + "]";
}

// A device's trace: taken by the sink as it was read, or read here from its list.
snapshot::EventClock collect_changes(SnapshotDevice& device, const PickleContainer* trace,
                                     snapshot::SnapshotSink& sink,
                                     const snapshot::SnapshotFields& fields,
                                     const SnapshotProgress& progress) {
    if (trace && trace->sink_list != 0) {
        return sink.fill_trace(device, *trace, trace_name(device));
    }
    static const Items kNone;
    const Items& events = trace ? trace->items : kNone;
    snapshot::TraceCollector collector;
    for (std::size_t i = 0; i < events.size(); ++i) {
        snapshot::report_stage(progress, "collecting", i, events.size());
        collector.add(i, events[i], fields,
                      [&] { return trace_name(device) + "[" + std::to_string(i) + "]"; });
    }
    return collector.fill(device);
}

// What OOM Lab writes as "oomlab_experiment": its settings, a JSON object a few levels deep.
// Another text (not JSON, not UTF-8, or nested past any config: 10^6 brackets took the
// writer's recursion down) is no experiment to show or load; the reason is kept instead.
constexpr int kMostExperimentDepth = 64;

std::string experiment_problem(const std::string& text) {
    bool too_deep = false;
    const nlohmann::json::parser_callback_t depth_check =
        [&](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
            too_deep = too_deep || depth > kMostExperimentDepth;
            return !too_deep;  // keep nothing once too deep; the parse itself is iterative
        };
    const nlohmann::json parsed =
        nlohmann::json::parse(text, depth_check, /*allow_exceptions=*/false);
    if (too_deep) {
        return "nested more than " + std::to_string(kMostExperimentDepth) + " levels deep";
    }
    if (parsed.is_discarded()) {
        return "not JSON in UTF-8";
    }
    return parsed.is_object() ? std::string() : "not a JSON object of settings";
}

// The report of a snapshot read into `document`, its traces taken by `sink`; both need live
// only while it is made.
SnapshotReport report_of_pickle(const snapshot::PickleDocument& document,
                                snapshot::SnapshotSink& sink, const std::string& source,
                                std::uint64_t file_bytes, const SnapshotProgress& progress = {}) {
    const PickleValue& root = document.root();
    // torch.cuda.memory_snapshot() returns the segments alone, a list of them.
    const bool bare_segments =
        root.list() &&
        std::all_of(root.list()->items.begin(), root.list()->items.end(),
                    [](const PickleValue& item) { return item.at("blocks") != nullptr; });
    if (!bare_segments && (!root.dict() || (!root.at("segments") && !root.at("device_traces")))) {
        throw BadInput(source +
                       ": a pickle, but not a memory snapshot (neither a dict with "
                       "\"segments\" or \"device_traces\" nor a list of segments); write one "
                       "with torch.cuda.memory._dump_snapshot(\"x.pickle\")");
    }
    // A device's trace saved alone (a JSON list of its events, read as device_traces alone)
    // has no segments of a dump to end at.
    const bool segments_dumped = bare_segments || root.at("segments") != nullptr;
    SnapshotReport report;
    report.source = source;
    if (const PickleValue* experiment = root.at("oomlab_experiment")) {
        const std::string text = experiment->text() ? *experiment->text() : "";
        report.experiment_problem = experiment_problem(text);
        if (report.experiment_problem.empty()) {
            report.experiment_json = text;
        } else {
            report.experiment_problem = "its \"oomlab_experiment\" is " +
                                        report.experiment_problem +
                                        ", so no settings of the run that recorded it are shown";
        }
    }
    WorkBudget budget(source, file_bytes);
    DeviceIndex devices(report);
    const snapshot::SnapshotFields fields(source);
    const auto in_root = [] { return std::string("the root"); };
    OriginBlocks origin_blocks = read_segments(
        devices, bare_segments ? root.list()->items : fields.list(root, "segments", in_root), {},
        budget, sink, fields);
    // Pinned host memory (record_pinned_host_memory=True): its segments and one trace, read as
    // a device of its own.
    const SegmentsOf host{"host_segments", kPinnedHostIndex};
    const Items& host_segments = fields.list(root, host.segments, in_root);
    origin_blocks.merge(read_segments(devices, host_segments, host, budget, sink, fields));
    const PickleValue* host_traces = root.at("host_traces");
    fields.list_of(host_traces, "host_traces", in_root);  // refuses anything but a list or None
    const PickleContainer* host_trace = host_traces ? host_traces->list() : nullptr;
    if (host_trace && (!host_trace->items.empty() || host_trace->taken > 0)) {
        devices.numbered(kPinnedHostIndex);
    }
    report.alloc_conf =
        snapshot::recorded_alloc_conf(root.at("allocator_settings"), report.alloc_conf_problem);
    const std::vector<snapshot::SnapshotAnnotation> annotations =
        snapshot::read_annotations(root, fields);
    const Items& traces =
        fields.list(root, "device_traces", [] { return std::string("the root"); });
    report.devices_seen = traces.size();
    for (std::size_t index = 0; index < traces.size(); ++index) {
        const PickleContainer* trace = traces[index].list();
        if (!trace && !traces[index].is_none()) {
            fields.refuse(
                [&] { return "device_traces[" + std::to_string(index) + "]"; },
                "a device's trace is " + snapshot::kind_of_value(traces[index]) + ", not a list");
        }
        if (trace && (!trace->items.empty() || trace->taken > 0)) {
            devices.numbered(int(index));
        }
    }
    for (SnapshotDevice& device : report.devices) {
        const std::size_t at = std::size_t(device.index);
        const PickleContainer* trace = device.index == kPinnedHostIndex ? host_trace
                                       : at < traces.size()             ? traces[at].list()
                                                                        : nullptr;
        budget.spend(trace ? trace->items.size() + trace->taken : 0, "device traces");
        const snapshot::EventClock clock = collect_changes(device, trace, sink, fields, progress);
        if (device.from_profile) {
            // A profile's segment spans its tensors' addresses (the heap's, gigabytes apart on
            // the CPU): no allocator reserved it. Its blocks stay, what was alive at the end.
            device.segments = 0;
            device.reserved = device.cached_free = device.largest_free_block = 0;
            device.pools.clear();
            if (at + 1 == traces.size()) {
                device.index = kProfilerCpuIndex;  // after the CUDA devices, as profiles have it
            }
        }
        if (const auto held = origin_blocks.find(device.index);
            held != origin_blocks.end() && !device.from_profile) {
            name_held_blocks(device, held->second, sink.origins());
        }
        device.segments_dumped = device.segments_dumped && segments_dumped;
        snapshot::place_stages(device, annotations, clock);
        snapshot::replay_changes(device, progress);
    }
    order_devices(report.devices);
    return report;
}

}  // namespace

SnapshotReport snapshot_report_from_bytes(const std::string& bytes, const std::string& source) {
    if (const std::optional<std::string> pickle = snapshot::pickle_of_other_form(
            bytes.substr(0, 64), [&] { return bytes; }, source)) {
        snapshot::SnapshotSink sink(source);
        return report_of_pickle(snapshot::read_pickle(*pickle, source, &sink), sink, source,
                                bytes.size());
    }
    if (snapshot::looks_like_json(bytes.substr(0, 64))) {
        const std::string text = text_as_utf8(source, "memory snapshot", bytes);
        snapshot::StringInput input(text);
        return snapshot::profiler_trace_report(input, source);
    }
    if (snapshot::looks_like_tar(bytes.substr(0, 512))) {
        snapshot::StringInput archive(bytes);
        snapshot::refuse_tar(archive, source, false);
    }
    snapshot::refuse_unknown(bytes.substr(0, 64), source);
    snapshot::SnapshotSink sink(source);
    return report_of_pickle(snapshot::read_pickle(bytes, source, &sink), sink, source,
                            bytes.size());
}

SnapshotReport read_snapshot_report(const std::string& path, const SnapshotProgress& progress) {
    check_input_path(path, "memory snapshot");
    snapshot::SnapshotFileInput input(path, kMostSnapshotBytes);
    const std::string head = input.peek(64);
    std::uint64_t read = 0;  // of the file, as far as the pickle reader has come
    const bool trace = snapshot::looks_like_json(head);
    try {
        if (trace && head.find('\0') != std::string::npos) {
            // UTF-16 (an editor's saving), or no text: read whole, converted or refused.
            const std::string text = text_as_utf8(
                path, "memory snapshot", input.read_rest(kMostTraceBytes, "a profiler's trace"));
            snapshot::StringInput whole(text);
            return snapshot::profiler_trace_report(whole, path);
        }
        const auto whole = [&] {  // JSON's and a page's: read whole, then as the pickle
            return input.read_rest(kMostTraceBytes, "a snapshot saved as JSON or in a web page");
        };
        if (const std::optional<std::string> pickle =
                snapshot::pickle_of_other_form(head, whole, path)) {
            snapshot::SnapshotSink sink(path);
            return report_of_pickle(snapshot::read_pickle(*pickle, path, &sink), sink, path,
                                    input.file_size(), progress);
        }
        if (!trace) {
            // A tar's header says so past the 64 bytes looked at so far.
            if (snapshot::looks_like_tar(input.peek(512))) {
                snapshot::refuse_tar(input, path, input.gzipped());
            }
            snapshot::refuse_unknown(head, path);
        }
        snapshot::ReadAhead ahead(input);
        const std::function<void()> after_chunk = [&] {
            read = ahead.file_position();
            if (progress) {
                progress({"reading", read, input.file_size()});
            }
        };
        if (trace) {
            return snapshot::profiler_trace_report(ahead, path, after_chunk);
        }
        snapshot::SnapshotSink sink(path);
        const snapshot::PickleDocument document =
            snapshot::read_pickle(ahead, path, after_chunk, &sink);
        return report_of_pickle(document, sink, path, input.file_size(), progress);
    } catch (const std::bad_alloc&) {
        // Memory grows with the events read, so the whole file needs about its share more.
        read = std::max<std::uint64_t>(read, 1);
        char times[32];
        std::snprintf(times, sizeof times, "%.1f", double(input.file_size()) / double(read));
        throw BadInput(path + ": memory ran out after reading " + format_bytes(std::int64_t(read)) +
                       " of its " + format_bytes(std::int64_t(input.file_size())) +
                       "; reading it whole needs about " + times +
                       " times the memory this machine could give. Free memory, or read it on a "
                       "machine with more");
    }
}

}  // namespace oomlab
