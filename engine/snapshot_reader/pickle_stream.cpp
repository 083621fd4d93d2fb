#include "pickle_stream.h"

#include <algorithm>

namespace oomlab::snapshot {
namespace {

constexpr std::size_t kChunkBytes = std::size_t(1) << 20;

}  // namespace

// At least `count` unread bytes in the buffer: the read ones dropped, a chunk at a time added.
void PickleStream::refill(std::size_t count) {
    m_buffer.erase(0, m_begin);
    m_offset += m_begin;
    m_begin = 0;
    while (m_buffer.size() < count) {
        const std::size_t had = m_buffer.size();
        const auto chunk = std::size_t(
            std::min<std::uint64_t>(kChunkBytes, std::max<std::uint64_t>(m_input.size_bound(), 1)));
        m_buffer.resize(had + chunk);
        const std::size_t got = m_input.read(m_buffer.data() + had, chunk);
        m_buffer.resize(had + got);
        if (got == 0) {
            throw Truncated();
        }
        m_after_chunk();
    }
}

}  // namespace oomlab::snapshot
