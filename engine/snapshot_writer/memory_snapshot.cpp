#include "oomlab/snapshot_writer/memory_snapshot.h"

#include <algorithm>
#include <optional>

#include "oomlab/allocator/caching_allocator_model.h"
#include "oomlab/common/atomic_file.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/files.h"
#include "pickle_writer.h"

namespace oomlab::memory {
namespace {

const char* state_name(SnapshotBlock::State state) {
    switch (state) {
        case SnapshotBlock::State::ActiveAllocated:
            return "active_allocated";
        case SnapshotBlock::State::ActivePendingFree:
            return "active_pending_free";
        case SnapshotBlock::State::Inactive:
            break;
    }
    return "inactive";
}

// memory_viz shows an allocation's frames as its stack; the engine's category stands in for
// the Python stack PyTorch records, as one frame named after the category.
void write_frames(PickleWriter& out, AllocationTag tag) {
    out.key("frames");
    out.begin_list();
    if (tag != AllocationTag::Untagged) {
        out.begin_dict();
        out.key("filename");
        out.value("oomlab");
        out.key("line");
        out.value(std::int64_t{0});
        out.key("name");
        out.value(tag_label(tag));
        out.end_dict();
    }
    out.end_list();
}

void write_segment(PickleWriter& out, const SnapshotSegment& segment) {
    std::int64_t allocated = 0;
    std::int64_t active = 0;
    std::int64_t requested = 0;
    for (const SnapshotBlock& block : segment.blocks) {
        if (block.state != SnapshotBlock::State::Inactive) {
            active += block.size;
            requested += block.requested_size;
        }
        if (block.state == SnapshotBlock::State::ActiveAllocated) {
            allocated += block.size;
        }
    }
    out.begin_dict();
    out.key("device");
    out.value(segment.device);
    out.key("address");
    out.value(segment.address);
    out.key("total_size");
    out.value(segment.total_size);
    out.key("allocated_size");
    out.value(allocated);
    out.key("active_size");
    out.value(active);
    out.key("requested_size");
    out.value(requested);
    out.key("stream");
    out.value(segment.stream);
    out.key("segment_type");
    out.value(segment.is_large ? "large" : "small");
    out.key("is_expandable");
    out.value(segment.is_expandable);
    write_frames(out, AllocationTag::Untagged);
    out.key("blocks");
    out.begin_list();
    std::int64_t address = segment.address;
    for (const SnapshotBlock& block : segment.blocks) {
        out.begin_dict();
        out.key("address");
        out.value(address);
        out.key("size");
        out.value(block.size);
        out.key("requested_size");
        out.value(block.requested_size);
        out.key("state");
        out.value(state_name(block.state));
        write_frames(out, block.tag);
        out.end_dict();
        address += block.size;
    }
    out.end_list();
    out.end_dict();
}

void write_event(PickleWriter& out, const TraceEvent& event) {
    out.begin_dict();
    out.key("action");
    out.value(action_name(event.action));
    out.key(event.action == TraceEvent::Action::Oom ? "device_free" : "addr");
    out.value(event.address);
    out.key("size");
    out.value(event.size);
    out.key("stream");
    out.value(event.stream);
    out.key("time_us");
    out.value(event.time_us);
    write_frames(out, event.tag);
    out.end_dict();
}

}  // namespace

const char* action_name(TraceEvent::Action action) {
    switch (action) {
        case TraceEvent::Action::Alloc:
            return "alloc";
        case TraceEvent::Action::FreeRequested:
            return "free_requested";
        case TraceEvent::Action::FreeCompleted:
            return "free_completed";
        case TraceEvent::Action::SegmentAlloc:
            return "segment_alloc";
        case TraceEvent::Action::SegmentFree:
            return "segment_free";
        case TraceEvent::Action::SegmentMap:
            return "segment_map";
        case TraceEvent::Action::SegmentUnmap:
            return "segment_unmap";
        case TraceEvent::Action::Snapshot:
            return "snapshot";
        case TraceEvent::Action::Oom:
            break;
    }
    return "oom";
}

namespace {

// The keys of torch.cuda.memory._snapshot()'s "allocator_settings" that change segments:
// max_split_size in bytes (-1 for none), and the divisions of each size interval by the MiB
// it starts at ("1", "2", "4", ...; those not divided left out).
void write_allocator_settings(PickleWriter& out, const allocator::AllocatorSettings& settings) {
    out.key("allocator_settings");
    out.begin_dict();
    out.key("PYTORCH_CUDA_ALLOC_CONF");
    out.value(allocator::to_alloc_conf(settings));
    out.key("max_split_size");
    out.value(settings.max_split_size == allocator::AllocatorSettings::kNoMaxSplit
                  ? std::int64_t(-1)
                  : settings.max_split_size);
    out.key("garbage_collection_threshold");
    out.value(settings.garbage_collection_threshold);
    out.key("expandable_segments");
    out.value(settings.expandable_segments);
    out.key("roundup_power2_divisions");
    out.begin_dict();
    for (std::size_t interval = 0; interval < settings.roundup_power2_divisions.size();
         ++interval) {
        if (const int divisions = settings.roundup_power2_divisions[interval]; divisions > 0) {
            out.key(std::to_string(std::int64_t(1) << interval));
            out.value(std::int64_t(divisions));
        }
    }
    out.end_dict();
    out.end_dict();
}

}  // namespace

std::string snapshot_pickle(const MemorySnapshot& snapshot) {
    PickleWriter out;
    out.begin_dict();
    out.key("segments");
    out.begin_list();
    for (const SnapshotSegment& segment : snapshot.segments) {
        write_segment(out, segment);
    }
    out.end_list();
    out.key("device_traces");
    out.begin_list();
    for (const auto& trace : snapshot.device_traces) {
        out.begin_list();
        for (const TraceEvent& event : trace) {
            write_event(out, event);
        }
        out.end_list();
    }
    out.end_list();
    if (snapshot.allocator_settings) {
        write_allocator_settings(out, *snapshot.allocator_settings);
    }
    if (!snapshot.experiment_json.empty()) {
        out.key("oomlab_experiment");
        out.value(snapshot.experiment_json);
    }
    out.end_dict();
    return out.finish();
}

bool is_snapshot_file(const std::string& path) {
    // PROTO 2, EMPTY_DICT, MARK, then the first key as BINUNICODE: what snapshot_pickle writes.
    static const std::string kStart("\x80\x02}(X\x08\0\0\0segments", 17);
    return file_starts_with(path, kStart);
}

void check_snapshot_path(const std::string& path, const std::vector<std::string>& inputs) {
    check_output_path(path, {"debug.memory_snapshot", inputs, false, is_snapshot_file});
}

void write_snapshot_file(const MemorySnapshot& snapshot, const std::filesystem::path& path) {
    const std::string bytes = snapshot_pickle(snapshot);
    try {
        AtomicFile file(path.string());
        file.write_at(0, bytes.data(), bytes.size());
        file.commit(bytes.size());
    } catch (const Error& error) {
        throw Error("debug.memory_snapshot: " + std::string(error.what()) +
                    "; choose a file in a folder you can write to");
    }
}

namespace {

// What `segments` of `device` hold; free blocks counted in the large pool's segments only
// (`large`), in the small pool's only, or in both.
SegmentUsage usage_of(const std::vector<SnapshotSegment>& segments, std::int64_t device,
                      std::optional<bool> large) {
    SegmentUsage usage;
    for (const SnapshotSegment& segment : segments) {
        if (segment.device != device) {
            continue;
        }
        usage.reserved += segment.total_size;
        const bool counts_free = !large || segment.is_large == *large;
        for (const SnapshotBlock& block : segment.blocks) {
            if (block.state == SnapshotBlock::State::ActiveAllocated) {
                usage.allocated += block.size;
            } else if (block.state == SnapshotBlock::State::Inactive && counts_free) {
                usage.free.bytes += block.size;
                usage.free.largest = std::max(usage.free.largest, block.size);
                ++usage.free.count;
            }
        }
    }
    return usage;
}

}  // namespace

SegmentUsage segment_usage(const std::vector<SnapshotSegment>& segments, std::int64_t device) {
    return usage_of(segments, device, std::nullopt);
}

FreeBlocks free_blocks_for(const std::vector<SnapshotSegment>& segments, std::int64_t device,
                           std::int64_t requested) {
    return usage_of(segments, device, !allocator::CachingAllocatorModel::is_small(requested)).free;
}

}  // namespace oomlab::memory
