#include "block_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "oomlab/common/errors.h"
#include "parallel.h"

namespace oomlab::glove_detail {
namespace {

// Reads are split into shares that threads take as they become free.
constexpr std::size_t kReadShareBytes = std::size_t{1} << 20;

struct ReadShare {
    std::size_t begin = 0;  // in the buffer
    std::size_t length = 0;
    std::size_t got = 0;
    int error = 0;
};

// Reads `share.length` bytes at `offset` unless the file ends first.
void read_share(int fd, char* buffer, std::uint64_t offset, ReadShare& share) {
    while (share.got < share.length) {
        const ssize_t got = pread(fd, buffer + share.begin + share.got, share.length - share.got,
                                  static_cast<off_t>(offset + share.got));
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got < 0) {
            share.error = errno;
            return;
        }
        if (got == 0) {
            return;
        }
        share.got += static_cast<std::size_t>(got);
    }
}

}  // namespace

BlockReader::BlockReader(const std::string& path, std::size_t block_bytes, int threads)
    : m_path(path), m_threads(std::max(threads, 1)) {
    m_fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (m_fd < 0) {
        throw bad_input_at(path, 0, std::string("cannot open: ") + std::strerror(errno));
    }
    struct stat info {};
    if (fstat(m_fd, &info) != 0 || !S_ISREG(info.st_mode)) {
        close(m_fd);
        throw bad_input_at(path, 0, "not a regular file");
    }
    m_size = static_cast<std::uint64_t>(info.st_size);
    posix_fadvise(m_fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    const std::size_t wanted = std::max<std::size_t>(block_bytes, 4096);
    m_buffer.resize(static_cast<std::size_t>(std::min<std::uint64_t>(wanted, m_size + 1)));
}

BlockReader::~BlockReader() {
    close(m_fd);
}

std::string_view BlockReader::next() {
    const std::size_t leftover = m_filled - m_handed_end;
    std::memmove(m_buffer.data(), m_buffer.data() + m_handed_end, leftover);
    m_filled = leftover;
    m_handed_end = 0;
    for (;;) {
        fill();
        if (m_filled == 0) {
            return {};
        }
        if (m_read_offset == m_size) {
            m_handed_end = m_filled;
            return {m_buffer.data(), m_filled};
        }
        const auto* newline = static_cast<const char*>(memrchr(m_buffer.data(), '\n', m_filled));
        if (newline != nullptr) {
            m_handed_end = static_cast<std::size_t>(newline - m_buffer.data()) + 1;
            return {m_buffer.data(), m_handed_end};
        }
        m_buffer.resize(m_buffer.size() * 2);  // one line longer than the buffer
    }
}

void BlockReader::fill() {
    const auto wanted = static_cast<std::size_t>(
        std::min<std::uint64_t>(m_buffer.size() - m_filled, m_size - m_read_offset));
    if (wanted == 0) {
        return;
    }
    const std::size_t count = std::max<std::size_t>(1, wanted / kReadShareBytes);
    std::vector<ReadShare> shares(count);
    for (std::size_t i = 0; i < count; ++i) {
        shares[i].begin = m_filled + wanted * i / count;
        shares[i].length = m_filled + wanted * (i + 1) / count - shares[i].begin;
    }
    run_tasks(static_cast<std::size_t>(m_threads), count, [&](std::size_t i) {
        read_share(m_fd, m_buffer.data(), m_read_offset + (shares[i].begin - m_filled), shares[i]);
    });
    for (const ReadShare& share : shares) {
        if (share.error != 0) {
            throw bad_input_at(m_path, 0,
                               std::string("cannot read: ") + std::strerror(share.error));
        }
        m_filled += share.got;
        m_read_offset += share.got;
        if (share.got < share.length) {
            m_size = m_read_offset;  // the file shrank while we read it: keep what is contiguous
            break;
        }
    }
}

}  // namespace oomlab::glove_detail
