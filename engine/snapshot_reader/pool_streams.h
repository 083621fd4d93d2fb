// Private pools in a replay. A private pool's segments (a CUDA graph's, a torch.cuda.MemPool's)
// serve only its own requests. PyTorch 2.12 and later name each entry's pool ("pool_id":
// SnapshotDevice::stream_pools); 2.11's entries do not, so there an event is taken to be a
// private pool's when it falls inside one of that pool's segments left at the end, after the
// segment was last opened there. The model keeps pools apart as it keeps streams apart: each
// private pool's requests are given a stream of their own.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "oomlab/snapshot_reader/snapshot_report.h"

namespace oomlab::snapshot {

class PoolStreams {
public:
    explicit PoolStreams(const SnapshotDevice& device);

    // The stream the model is given for a change of the trace: its own, or its private pool's.
    std::int64_t of(const SnapshotTraceChange& change) const;
    // The same for memory held at `address` before the trace's first event.
    std::int64_t before_trace(std::int64_t address, std::int64_t stream) const;
    // The streams given to private pools: their segments were still held at the end.
    std::vector<std::int64_t> private_streams() const;
    // How many changes were taken to be a private pool's.
    std::size_t private_changes() const;

private:
    struct PrivateRange {
        std::int64_t end = 0;
        bool opened_in_trace = false;
        std::size_t since_event = 0;  // the last time the trace opened it
        std::int64_t pool_stream = 0;
    };
    const PrivateRange* range_at(std::int64_t address) const;
    std::int64_t pool_stream(std::pair<std::int64_t, std::int64_t> pool, std::int64_t stream);

    const SnapshotDevice& m_device;
    std::map<std::int64_t, PrivateRange> m_ranges;  // by address
    std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::int64_t> m_streams;
};

}  // namespace oomlab::snapshot
