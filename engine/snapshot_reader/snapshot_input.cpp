#include "snapshot_input.h"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <filesystem>

#include "oomlab/common/errors.h"
#include "oomlab/common/format.h"

namespace oomlab::snapshot {
namespace {

gzFile file_of(void* file) {
    return static_cast<gzFile>(file);
}

}  // namespace

SnapshotFileInput::SnapshotFileInput(const std::string& path, std::uint64_t most)
    : m_path(path), m_most(most) {
    std::error_code error;
    m_file_size = std::filesystem::file_size(path, error);
    m_file = gzopen(path.c_str(), "rb");
    if (!m_file) {
        throw BadInput(path + ": cannot be opened for reading: " + std::strerror(errno));
    }
    gzbuffer(file_of(m_file), 1 << 20);
}

SnapshotFileInput::~SnapshotFileInput() {
    gzclose(file_of(m_file));
}

std::size_t SnapshotFileInput::read(char* into, std::size_t most) {
    if (m_peeked_at < m_peeked.size()) {
        const std::size_t count = std::min(most, m_peeked.size() - m_peeked_at);
        std::memcpy(into, m_peeked.data() + m_peeked_at, count);
        m_peeked_at += count;
        return count;
    }
    const int got = gzread(file_of(m_file), into, unsigned(std::min<std::size_t>(most, INT_MAX)));
    int status = Z_OK;
    const char* why = gzerror(file_of(m_file), &status);
    if (got < 0 || (status != Z_OK && status != Z_STREAM_END)) {
        throw BadInput(m_path + ": gzip, but corrupt or cut short (" + why + ") at byte " +
                       std::to_string(file_position()) +
                       " of its compressed data; gunzip it or record it again");
    }
    m_unpacked += std::uint64_t(got);
    if (m_unpacked > m_most) {
        throw BadInput(m_path + ": unpacks to more than " + format_bytes(std::int64_t(m_most)) +
                       ", the most a snapshot may hold here");
    }
    return std::size_t(got);
}

std::uint64_t SnapshotFileInput::size_bound() const {
    return gzdirect(file_of(m_file)) ? m_file_size : m_most;
}

std::string SnapshotFileInput::peek(std::size_t count) {
    std::string head(count, '\0');
    std::size_t have = 0;
    while (have < count) {
        const std::size_t got = read(head.data() + have, count - have);
        if (got == 0) {
            break;
        }
        have += got;
    }
    head.resize(have);
    m_peeked = head;
    m_peeked_at = 0;
    return head;
}

std::string SnapshotFileInput::read_rest(std::uint64_t most, const std::string& what) {
    std::string all;
    char chunk[1 << 16];
    while (const std::size_t got = read(chunk, sizeof chunk)) {
        all.append(chunk, got);
        if (all.size() > most) {
            throw BadInput(m_path + ": " + what + " of more than " +
                           format_bytes(std::int64_t(most)) + ", the most read here");
        }
    }
    return all;
}

bool SnapshotFileInput::gzipped() const {
    return !gzdirect(file_of(m_file));
}

std::uint64_t SnapshotFileInput::file_position() const {
    const z_off_t offset = gzoffset(file_of(m_file));
    return offset < 0 ? 0 : std::uint64_t(offset);
}

std::size_t StringInput::read(char* into, std::size_t most) {
    const std::size_t count = std::min(most, m_data.size() - m_at);
    std::memcpy(into, m_data.data() + m_at, count);
    m_at += count;
    return count;
}

PickleDocument read_pickle(std::string_view data, const std::string& source, PickleListSink* sink) {
    StringInput input(data);
    return read_pickle(input, source, {}, sink);
}

}  // namespace oomlab::snapshot
