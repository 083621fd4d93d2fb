// What the pickle reader gives away as it reads, so that a snapshot of millions of events and
// blocks is never held as dicts: each device's trace (its events, as TraceCollector keeps
// them) and each segment's blocks (32 bytes each).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "oomlab/snapshot_reader/snapshot_report.h"
#include "pickle_reader.h"
#include "snapshot_fields.h"
#include "snapshot_trace_collector.h"

namespace oomlab::snapshot {

// Where the blocks alive at the end were allocated, as the frames they carry tell (a block's
// "frames" since PyTorch 2.1, the last of its "history" in 2.0): each distinct stack's source
// line and kind, named once.
class BlockOrigins {
public:
    static constexpr std::uint32_t kNone = UINT32_MAX;
    struct Origin {
        std::string line;
        std::string kind;
    };

    // The origin of `block`'s frames; kNone where it carries none.
    std::uint32_t of(const PickleValue& block, const SnapshotFields& fields,
                     const SnapshotFields::Where& where);
    const Origin& at(std::uint32_t origin) const { return m_origins.at(origin); }

private:
    std::vector<Origin> m_origins;
    std::unordered_map<std::uint64_t, std::uint32_t> m_by_frames;  // equal stacks are one list
};

// A segment's block as the report reads it.
struct SnapshotBlock {
    enum class State : std::uint8_t { Allocated, Inactive, PendingFree, Other };
    std::int64_t address = -1;  // -1: not given (older snapshots list blocks in order)
    std::int64_t size = 0;
    std::int64_t requested = -1;  // an allocated block's requested_size; -1: not given
    std::uint32_t origin = BlockOrigins::kNone;  // an allocated block's frames, where it has them
    State state = State::Other;
};

// The block `block` says, its origin named in `origins`; throws FieldRefusal naming `where` for
// a value out of place.
SnapshotBlock block_of(const PickleValue& block, const SnapshotFields& fields,
                       const SnapshotFields::Where& where, BlockOrigins& origins);

// Takes each list of trace events (dicts with an "action") and of blocks (dicts with a
// "state") as the reader reads it. A value out of place is refused only once the list is
// known to be a device's trace or a segment's blocks, where it is named.
class SnapshotSink : public PickleListSink {
public:
    explicit SnapshotSink(const std::string& source) : m_fields(source) {}

    std::uint32_t begin_list(const PickleValue& first) override;
    void take(std::uint32_t list, std::size_t index, const PickleValue& item) override;
    std::uint64_t bytes() const override;
    // Where the blocks read (here or by blocks_of) were allocated.
    BlockOrigins& origins() { return m_origins; }

    // The trace taken as `list` (`where`: device_traces[device.index], host_traces), into
    // `device`, and when its events happened; throws FieldRefusal for the first value out of
    // place in it. A list two devices name is copied from the first device filled (without its
    // times).
    EventClock fill_trace(SnapshotDevice& device, const PickleContainer& list,
                          const std::string& where);
    // The blocks taken as `list`, a segment's (`where` names it); throws FieldRefusal for the
    // first value out of place in them.
    const std::vector<SnapshotBlock>& blocks(const PickleContainer& list,
                                             const SnapshotFields::Where& where) const;

private:
    struct Taken {
        std::unique_ptr<TraceCollector> trace;  // else blocks
        std::vector<SnapshotBlock> blocks;
        std::optional<std::pair<std::size_t, std::string>> refused;  // the item, and why
        const SnapshotDevice* filled = nullptr;
    };
    void refuse_taken(const Taken& taken, const std::string& where) const;

    SnapshotFields m_fields;
    BlockOrigins m_origins;
    std::vector<Taken> m_lists;
    std::uint64_t m_bytes = 0;
};

}  // namespace oomlab::snapshot
