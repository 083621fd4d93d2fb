#include "snapshot_sink.h"

#include "snapshot_frames.h"

namespace oomlab::snapshot {

std::uint32_t BlockOrigins::of(const PickleValue& block, const SnapshotFields& fields,
                               const SnapshotFields::Where& where) {
    const PickleValue* frames = block.at("frames");
    if (!frames) {  // PyTorch 2.0: the block's history of allocations, the last one its own
        const std::vector<PickleValue>& history = fields.list(block, "history", where);
        frames = history.empty() ? nullptr : history.back().at("frames");
    }
    if (!frames || !frames->list() || frames->list()->items.empty()) {
        return kNone;
    }
    const auto [named, added] = m_by_frames.try_emplace(frames->bits(), std::uint32_t(0));
    if (added) {
        const std::vector<PickleValue>& list = frames->list()->items;
        named->second = std::uint32_t(m_origins.size());
        m_origins.push_back({user_line(list), kind_of(list)});
    }
    return named->second;
}

SnapshotBlock block_of(const PickleValue& block, const SnapshotFields& fields,
                       const SnapshotFields::Where& where, BlockOrigins& origins) {
    SnapshotBlock read;
    const std::string& state = text_at(block, "state");
    read.state = state == "active_allocated"      ? SnapshotBlock::State::Allocated
                 : state == "inactive"            ? SnapshotBlock::State::Inactive
                 : state == "active_pending_free" ? SnapshotBlock::State::PendingFree
                                                  : SnapshotBlock::State::Other;
    read.size = fields.bytes(block, "size", where);
    read.address = fields.whole(block, "address", where, 0, INT64_MAX, -1);
    if (read.state == SnapshotBlock::State::Allocated) {
        read.requested = fields.whole(block, "requested_size", where, 0, kMostBytes, -1);
        read.origin = origins.of(block, fields, where);
    }
    return read;
}

std::uint32_t SnapshotSink::begin_list(const PickleValue& first) {
    const bool trace = !text_at(first, "action").empty();
    if (!first.dict() || (!trace && text_at(first, "state").empty())) {
        return 0;
    }
    Taken& taken = m_lists.emplace_back();
    if (trace) {
        taken.trace = std::make_unique<TraceCollector>();
    }
    return std::uint32_t(m_lists.size());
}

void SnapshotSink::take(std::uint32_t list, std::size_t index, const PickleValue& item) {
    Taken& taken = m_lists[list - 1];
    if (taken.refused) {
        return;
    }
    const auto unnamed = [] { return std::string("an item"); };  // named when refused
    try {
        if (taken.trace) {
            const std::uint64_t before = taken.trace->bytes();
            taken.trace->add(index, item, m_fields, unnamed);
            m_bytes += taken.trace->bytes() - before;
        } else {
            taken.blocks.push_back(block_of(item, m_fields, unnamed, m_origins));
            m_bytes += sizeof(SnapshotBlock);
        }
    } catch (const FieldRefusal& refusal) {
        taken.refused.emplace(index, refusal.why());
    }
}

std::uint64_t SnapshotSink::bytes() const {
    return m_bytes;  // asked for each value read: a sum kept as items are taken
}

void SnapshotSink::refuse_taken(const Taken& taken, const std::string& where) const {
    if (taken.refused) {
        m_fields.refuse([&] { return where + "[" + std::to_string(taken.refused->first) + "]"; },
                        taken.refused->second);
    }
}

EventClock SnapshotSink::fill_trace(SnapshotDevice& device, const PickleContainer& list,
                                    const std::string& where) {
    Taken& taken = m_lists.at(list.sink_list - 1);
    refuse_taken(taken, where);
    if (!taken.trace) {  // a list of blocks where a trace was: no event in it
        device.events = list.taken;
        return {};
    }
    if (const SnapshotDevice* first = taken.filled) {
        move_trace(device, *first);
        return {};
    }
    taken.filled = &device;
    return taken.trace->fill(device);
}

const std::vector<SnapshotBlock>& SnapshotSink::blocks(const PickleContainer& list,
                                                       const SnapshotFields::Where& where) const {
    const Taken& taken = m_lists.at(list.sink_list - 1);
    if (taken.trace) {
        m_fields.refuse(where, "its \"blocks\" are a trace's events (dicts with an \"action\")");
    }
    refuse_taken(taken, where() + ".blocks");
    return taken.blocks;
}

}  // namespace oomlab::snapshot
