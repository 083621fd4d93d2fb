#include "read_ahead.h"

#include <algorithm>
#include <cstring>

namespace oomlab::snapshot {

ReadAhead::ReadAhead(SnapshotFileInput& file)
    : m_file(file), m_size_bound(file.size_bound()), m_thread([this] { read_file(); }) {}

ReadAhead::~ReadAhead() {
    {
        const std::lock_guard<std::mutex> lock(m_mutex);
        m_stop = true;
    }
    m_changed.notify_all();
    m_thread.join();
}

void ReadAhead::read_file() {
    try {
        while (true) {
            Chunk chunk;
            {
                std::unique_lock<std::mutex> lock(m_mutex);
                m_changed.wait(lock, [&] { return m_stop || m_ready.size() < kChunksAhead; });
                if (m_stop) {
                    return;
                }
                if (!m_spare.empty()) {
                    chunk.bytes.swap(m_spare.back());
                    m_spare.pop_back();
                }
            }
            chunk.bytes.resize(kChunkBytes);
            chunk.bytes.resize(m_file.read(chunk.bytes.data(), kChunkBytes));
            chunk.file_position = m_file.file_position();
            const bool end = chunk.bytes.empty();
            {
                const std::lock_guard<std::mutex> lock(m_mutex);
                if (end) {
                    m_ended = true;
                } else {
                    m_ready.push_back(std::move(chunk));
                }
            }
            m_changed.notify_all();
            if (end) {
                return;
            }
        }
    } catch (...) {
        {
            const std::lock_guard<std::mutex> lock(m_mutex);
            m_error = std::current_exception();
            m_ended = true;
        }
        m_changed.notify_all();
    }
}

std::size_t ReadAhead::read(char* into, std::size_t most) {
    if (m_at == m_current.bytes.size()) {
        std::unique_lock<std::mutex> lock(m_mutex);
        m_changed.wait(lock, [&] { return !m_ready.empty() || m_ended; });
        if (m_ready.empty()) {
            if (m_error) {
                std::rethrow_exception(m_error);
            }
            return 0;
        }
        m_spare.push_back(std::move(m_current.bytes));
        m_current = std::move(m_ready.front());
        m_ready.pop_front();
        m_at = 0;
        lock.unlock();
        m_changed.notify_all();
    }
    const std::size_t count = std::min(most, m_current.bytes.size() - m_at);
    std::memcpy(into, m_current.bytes.data() + m_at, count);
    m_at += count;
    return count;
}

}  // namespace oomlab::snapshot
