#include "snapshot_trace_collector.h"

#include <climits>

#include "snapshot_frames.h"

namespace oomlab::snapshot {

TraceCollector::TraceCollector() : m_name_ids(m_device) {}

namespace {

// The fields of an event the report reads (the last of a key set twice, as in Python): found in
// one pass over a small dict, each key's text told by its address (a snapshot's strings are
// kept once, so its events name a few keys), and by its index in a large dict, where a pass per
// event made reading quadratic.
struct EventFields {
    static constexpr std::size_t kOnePassEntries = 16;
    using Field = const PickleValue* EventFields::*;
    static constexpr std::uint8_t kNoField = 10;
    static const std::pair<std::string_view, Field> kFields[kNoField];  // the names of the fields

    const PickleValue* action = nullptr;
    const PickleValue* addr = nullptr;
    const PickleValue* size = nullptr;
    const PickleValue* stream = nullptr;
    const PickleValue* frames = nullptr;
    const PickleValue* device_free = nullptr;
    const PickleValue* time_us = nullptr;
    const PickleValue* user_metadata = nullptr;
    const PickleValue* category = nullptr;
    const PickleValue* pool_id = nullptr;

    // `keys`: each key's text seen so far and the field it names (kNoField: none), added to.
    EventFields(const PickleValue& event, TraceCollector::EventKeys& keys) {
        const PickleContainer* entries = event.dict();
        if (entries && entries->size() > kOnePassEntries) {
            for (const auto& [name, field] : kFields) {
                this->*field = event.at(name);
            }
            return;
        }
        for (std::size_t i = 0; entries && i < entries->size(); ++i) {
            const std::uint8_t field = field_of(entries->key(i).text(), keys);
            if (field != kNoField) {
                this->*kFields[field].second = &entries->value(i);
            }
        }
    }

    static std::uint8_t field_of(const std::string* key, TraceCollector::EventKeys& keys) {
        for (const auto& [known, field] : keys) {
            if (known == key) {
                return field;
            }
        }
        constexpr std::size_t kMostKeysKept = 64;  // a trace of ever new keys costs a scan each
        std::uint8_t field = 0;
        while (field < kNoField && !(key && *key == kFields[field].first)) {
            ++field;
        }
        if (keys.size() < kMostKeysKept) {
            keys.emplace_back(key, field);
        }
        return field;
    }
};

const std::pair<std::string_view, EventFields::Field> EventFields::kFields[] = {
    {"action", &EventFields::action},     {"addr", &EventFields::addr},
    {"size", &EventFields::size},         {"stream", &EventFields::stream},
    {"frames", &EventFields::frames},     {"device_free", &EventFields::device_free},
    {"time_us", &EventFields::time_us},   {"user_metadata", &EventFields::user_metadata},
    {"category", &EventFields::category}, {"pool_id", &EventFields::pool_id}};

// PyTorch's category of a tensor (a snapshot made from a profile: "parameter", "gradient",
// "activation", "temporary", "optimizer_state", "input", "autograd_detail"); null where it is
// absent or "unknown", and the frames tell instead.
const std::string* known_category(const PickleValue* category, const SnapshotFields& fields,
                                  const SnapshotFields::Where& where) {
    if (!category || category->is_none()) {
        return nullptr;
    }
    const std::string* text = category->text();
    if (!text) {
        fields.refuse(where, "\"category\" is " + kind_of_value(*category) + ", not a string");
    }
    return text->empty() || *text == "unknown" ? nullptr : text;
}

// Metadata a program set, cut at a length a person reads: a program may set megabytes, and
// labels added to one allocation again and again were a new, longer name each time (200 of
// 100 KiB: 2 GB of names).
constexpr std::size_t kMostLabelBytes = 1024;

std::string readable_label(const std::string& label) {
    return label.size() <= kMostLabelBytes ? label : label.substr(0, kMostLabelBytes - 3) + "...";
}

}  // namespace

TraceCollector::Action TraceCollector::action_of(const PickleValue* action) {
    const std::string* text = action ? action->text() : nullptr;
    for (const auto& [known, what] : m_actions) {  // a trace names a few actions, each once
        if (known == text) {
            return what;
        }
    }
    const std::string name = text ? *text : std::string();
    Action what = Action::Other;
    if (name == "alloc") {
        what = Action::Alloc;
    } else if (name == "free_completed") {
        what = Action::Free;
    } else if (name == "segment_alloc") {
        what = Action::Reserve;
    } else if (name == "segment_map") {
        what = Action::Map;
    } else if (name == "segment_free") {
        what = Action::Release;
    } else if (name == "segment_unmap") {
        what = Action::Unmap;
    } else if (name == "oom") {
        what = Action::Oom;
    } else if (name == "annotate") {
        what = Action::Annotate;
    }
    m_actions.emplace_back(text, what);
    return what;
}

std::uint16_t TraceCollector::stream_id(std::int64_t stream,
                                        std::pair<std::int64_t, std::int64_t> pool,
                                        const SnapshotFields& fields,
                                        const SnapshotFields::Where& where) {
    std::vector<std::int64_t>& streams = m_device.streams;
    std::vector<std::pair<std::int64_t, std::int64_t>>& pools = m_device.stream_pools;
    if (!streams.empty() && streams[m_last_stream] == stream && pools[m_last_stream] == pool) {
        return m_last_stream;  // events come in runs on one stream
    }
    const auto [known, added] = m_stream_ids.try_emplace(
        std::make_tuple(stream, pool.first, pool.second), std::uint16_t(streams.size()));
    if (added) {
        if (streams.size() == SnapshotTraceChange::kMostStreams) {
            fields.refuse(where, "a trace of more than " +
                                     std::to_string(SnapshotTraceChange::kMostStreams) +
                                     " streams (a program uses a few)");
        }
        streams.push_back(stream);
        pools.push_back(pool);
    }
    m_last_stream = known->second;
    return m_last_stream;
}

std::uint32_t TraceCollector::stack_of(const PickleValue* frames, const std::string* metadata,
                                       const std::string* category, const SnapshotFields& fields,
                                       const SnapshotFields::Where& where) {
    // Equal stacks are one list once read, and each text is kept once: both are found again
    // by their addresses.
    const std::uint64_t stack = frames ? frames->bits() : 0;
    const auto name = [&] {
        const std::vector<PickleValue>& list = fields.list_of(frames, "frames", where);
        return m_name_ids.stack(user_line(list), category ? kind_of(*category) : kind_of(list),
                                metadata ? readable_label(*metadata) : std::string());
    };
    if (metadata || category) {
        const auto [named, added] = m_by_labelled_frames.try_emplace({stack, metadata, category});
        return added ? named->second = name() : named->second;
    }
    const auto [named, added] = m_by_frames.try_emplace(stack);
    return added ? named->second = name() : named->second;
}

void TraceCollector::annotate(std::int64_t address, const std::string& metadata) {
    using What = SnapshotTraceChange::What;
    if (!m_annotated) {
        m_annotated = true;
        for (std::size_t i = 0; i < m_device.changes.size(); ++i) {
            if (m_device.changes[i].what == What::Alloc) {
                m_last_alloc[m_device.changes[i].address] = i;
            }
        }
    }
    const auto found = m_last_alloc.find(address);
    if (found == m_last_alloc.end() || metadata.empty()) {
        return;
    }
    SnapshotTraceChange& alloc = m_device.changes[found->second];
    const SnapshotStack stack = m_device.stacks.at(alloc.stack);
    std::string labels = metadata.substr(0, kMostLabelBytes);
    if (stack.metadata != SnapshotStack::kNoMetadata) {
        const std::string& before = m_device.names[stack.metadata];
        if (before.size() >= kMostLabelBytes) {
            return;  // cut already: what is added would not be shown
        }
        labels = before + "; " + labels;
    }
    alloc.stack = m_name_ids.stack(m_device.names[stack.line], m_device.names[stack.kind],
                                   readable_label(labels));
}

void TraceCollector::add(std::size_t index, const PickleValue& event, const SnapshotFields& fields,
                         const SnapshotFields::Where& where) {
    using What = SnapshotTraceChange::What;
    m_device.events = std::max(m_device.events, index + 1);
    const EventFields found(event, m_event_keys);
    if (found.time_us) {
        const std::int64_t time =
            fields.whole_of(found.time_us, "time_us", where, INT64_MIN, INT64_MAX);
        m_clock.add(index, &time);
    } else {
        m_clock.add(index, nullptr);
    }
    const Action action = action_of(found.action);
    SnapshotTraceChange change;
    change.event = std::uint32_t(index);
    change.address = fields.whole_of(found.addr, "addr", where, 0, INT64_MAX);
    change.size = fields.bytes_of(found.size, "size", where);
    change.stream = stream_id(fields.whole_of(found.stream, "stream", where, INT64_MIN, INT64_MAX),
                              fields.pool_of(found.pool_id, "pool_id", where), fields, where);
    m_pools_named |= found.pool_id != nullptr;
    switch (action) {
        case Action::Alloc: {
            m_device.from_profile |= found.category != nullptr;
            const std::string* metadata =
                found.user_metadata ? found.user_metadata->text() : nullptr;
            if (found.user_metadata && !metadata && !found.user_metadata->is_none()) {
                fields.refuse(where, "\"user_metadata\" is " + kind_of_value(*found.user_metadata) +
                                         ", not a string");
            }
            change.stack =
                stack_of(found.frames, metadata && !metadata->empty() ? metadata : nullptr,
                         known_category(found.category, fields, where), fields, where);
            m_net = fields.add(m_net, change.size, where);
            if (m_annotated) {
                m_last_alloc[change.address] = m_device.changes.size();
            }
            break;
        }
        case Action::Free:
            change.what = What::Free;
            m_net = fields.add(m_net, -change.size, where);
            break;
        case Action::Reserve:
        case Action::Map:
            change.what = What::Reserve;
            change.pages = action == Action::Map;
            break;
        case Action::Release:
        case Action::Unmap:
            change.what = What::Release;
            change.pages = action == Action::Unmap;
            break;
        case Action::Annotate: {
            const std::string* metadata =
                found.user_metadata ? found.user_metadata->text() : nullptr;
            annotate(change.address, metadata ? *metadata : std::string());
            return;
        }
        case Action::Oom:
            m_device.ooms.push_back(
                {index, change.size, fields.bytes_of(found.device_free, "device_free", where)});
            return;
        case Action::Other:
            return;
    }
    m_device.changes.push_back(change);
}

EventClock TraceCollector::fill(SnapshotDevice& device) {
    EventClock clock = std::move(m_clock);
    if (!m_pools_named) {
        m_device.stream_pools.clear();
    }
    move_trace(device, std::move(m_device));
    m_device = SnapshotDevice();
    m_clock = EventClock();
    m_stream_ids.clear();
    m_last_stream = 0;
    m_pools_named = false;
    m_last_alloc.clear();
    m_annotated = false;
    return clock;
}

void move_trace(SnapshotDevice& device, SnapshotDevice trace) {
    device.events = trace.events;
    device.changes = std::move(trace.changes);
    device.streams = std::move(trace.streams);
    device.stream_pools = std::move(trace.stream_pools);
    device.stacks = std::move(trace.stacks);
    device.names = std::move(trace.names);
    device.ooms = std::move(trace.ooms);
    device.from_profile = trace.from_profile;
}

std::uint64_t TraceCollector::bytes() const {
    // Asked for each value the reader keeps, so a name counts as a typical line of text.
    constexpr std::uint64_t kName = sizeof(std::string) + 64;
    constexpr std::uint64_t kMapEntry = 48;  // a node of m_by_frames, and its bucket
    return m_device.changes.size() * sizeof(SnapshotTraceChange) +
           m_device.ooms.capacity() * sizeof(SnapshotOom) + m_device.names.capacity() * kName +
           m_device.stacks.capacity() * sizeof(SnapshotStack) +
           (m_by_frames.size() + m_by_labelled_frames.size() + m_last_alloc.size()) * kMapEntry +
           m_clock.bytes();
}

}  // namespace oomlab::snapshot
