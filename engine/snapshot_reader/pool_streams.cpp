#include "pool_streams.h"

#include <climits>

namespace oomlab::snapshot {

namespace {

constexpr std::pair<std::int64_t, std::int64_t> kDefaultPool{0, 0};

}  // namespace

PoolStreams::PoolStreams(const SnapshotDevice& device) : m_device(device) {
    for (std::size_t id = 0; id < device.stream_pools.size(); ++id) {
        if (device.stream_pools[id] != kDefaultPool) {
            pool_stream(device.stream_pools[id], device.streams[id]);
        }
    }
    for (const SnapshotSegmentLayout& segment : device.layout) {
        if (segment.pool != kDefaultPool) {
            m_ranges[segment.address] = {segment.address + segment.size, false, 0,
                                         pool_stream(segment.pool, segment.stream)};
        }
    }
    if (m_ranges.empty()) {
        return;
    }
    for (const SnapshotTraceChange& change : device.changes) {
        if (change.what != SnapshotTraceChange::What::Reserve) {
            continue;
        }
        if (auto found = m_ranges.upper_bound(change.address); found != m_ranges.begin()) {
            --found;
            if (change.address < found->second.end) {
                found->second.opened_in_trace = true;
                found->second.since_event = change.event;
            }
        }
    }
}

std::size_t PoolStreams::private_changes() const {
    std::size_t count = 0;
    for (const SnapshotTraceChange& change : m_device.changes) {
        count += of(change) != m_device.streams[change.stream];
    }
    return count;
}

const PoolStreams::PrivateRange* PoolStreams::range_at(std::int64_t address) const {
    auto found = m_ranges.upper_bound(address);
    if (found == m_ranges.begin()) {
        return nullptr;
    }
    --found;
    return address < found->second.end ? &found->second : nullptr;
}

// Streams are the program's (addresses, or 0): a private pool's are numbered from INT64_MIN,
// where none of them lies.
std::int64_t PoolStreams::pool_stream(std::pair<std::int64_t, std::int64_t> pool,
                                      std::int64_t stream) {
    const auto key = std::make_tuple(pool.first, pool.second, stream);
    const auto [at, added] = m_streams.try_emplace(key, INT64_MIN + std::int64_t(m_streams.size()));
    return at->second;
}

std::vector<std::int64_t> PoolStreams::private_streams() const {
    std::vector<std::int64_t> streams;
    for (const auto& [key, stream] : m_streams) {
        streams.push_back(stream);
    }
    return streams;
}

std::int64_t PoolStreams::of(const SnapshotTraceChange& change) const {
    const std::int64_t stream = m_device.streams[change.stream];
    if (!m_device.stream_pools.empty()) {  // the entry said its pool
        const std::pair<std::int64_t, std::int64_t>& pool = m_device.stream_pools[change.stream];
        return pool == kDefaultPool
                   ? stream
                   : m_streams.at(std::make_tuple(pool.first, pool.second, stream));
    }
    const PrivateRange* range = range_at(change.address);
    return range && change.event >= range->since_event ? range->pool_stream : stream;
}

std::int64_t PoolStreams::before_trace(std::int64_t address, std::int64_t stream) const {
    const PrivateRange* range = range_at(address);
    return range && !range->opened_in_trace ? range->pool_stream : stream;
}

}  // namespace oomlab::snapshot
