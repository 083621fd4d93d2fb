// A device's trace of events read into the changes its report replays, one event at a time:
// as the pickle reader reads them (SnapshotSink), so that a trace of millions of events is
// never held as dicts, or from a list already read.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "event_clock.h"
#include "oomlab/snapshot_reader/snapshot_report.h"
#include "pickle_reader.h"
#include "snapshot_fields.h"
#include "snapshot_replay.h"

namespace oomlab::snapshot {

// The trace of `trace` (its events, changes, stacks, names and out-of-memory events) into
// `device`.
void move_trace(SnapshotDevice& device, SnapshotDevice trace);

class TraceCollector {
public:
    TraceCollector();
    // The keys of the events read so far, by their kept text, and which field each names.
    using EventKeys = std::vector<std::pair<const std::string*, std::uint8_t>>;

    TraceCollector(const TraceCollector&) = delete;  // m_name_ids refers to m_device
    TraceCollector& operator=(const TraceCollector&) = delete;

    // Event `index`: an allocation, free or segment change is kept (with its stack's source
    // line and kind, named once for each distinct stack), an out-of-memory noted, and anything
    // else counted. Throws FieldRefusal naming `where` for a value out of place.
    void add(std::size_t index, const PickleValue& event, const SnapshotFields& fields,
             const SnapshotFields::Where& where);
    // What was collected, moved into `device` (its events, changes, names and out-of-memory
    // events), and when each event happened; the collector is left empty.
    EventClock fill(SnapshotDevice& device);
    std::uint64_t bytes() const;

private:
    enum class Action : std::uint8_t {
        Alloc,
        Free,
        Reserve,
        Map,
        Release,
        Unmap,
        Oom,
        Annotate,
        Other
    };
    Action action_of(const PickleValue* action);
    // The stack id of an allocation's frames, the metadata the program set and PyTorch's
    // category of the tensor (each null: none); the category, where given, is its kind.
    std::uint32_t stack_of(const PickleValue* frames, const std::string* metadata,
                           const std::string* category, const SnapshotFields& fields,
                           const SnapshotFields::Where& where);
    // PyTorch 2.15's "annotate" entry: `metadata` set after the fact on the live allocation at
    // `address`, added to what its allocation's metadata says (nothing where the trace holds
    // no allocation there: it was made before the trace began).
    void annotate(std::int64_t address, const std::string& metadata);
    // The index of `stream` used by `pool` in the device's streams, refused past kMostStreams.
    std::uint16_t stream_id(std::int64_t stream, std::pair<std::int64_t, std::int64_t> pool,
                            const SnapshotFields& fields, const SnapshotFields::Where& where);

    std::vector<std::pair<const std::string*, Action>> m_actions;  // each text seen, read once
    EventKeys m_event_keys;
    SnapshotDevice m_device;  // its events, changes, stacks, names and out-of-memory events
    EventClock m_clock;
    NameTable m_name_ids;
    // Equal stacks are one list of frames once read, so each is named once.
    std::unordered_map<std::uint64_t, std::uint32_t> m_by_frames;
    std::map<std::tuple<std::uint64_t, const std::string*, const std::string*>, std::uint32_t>
        m_by_labelled_frames;  // frames, metadata, category
    std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::uint16_t> m_stream_ids;
    std::uint16_t m_last_stream = 0;
    bool m_pools_named = false;  // an entry named its "pool_id"
    std::int64_t m_net = 0;      // allocated less freed so far: within what a machine holds
    // The last allocation at each address, kept from the first annotation on (a trace without
    // one pays nothing for it).
    std::unordered_map<std::int64_t, std::size_t> m_last_alloc;
    bool m_annotated = false;
};

}  // namespace oomlab::snapshot
