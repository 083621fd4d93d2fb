#include "oomlab/common/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "oomlab/common/errors.h"

namespace oomlab {

AtomicFile::AtomicFile(std::string target) : m_target(std::move(target)) {
    static std::atomic<unsigned> counter{0};
    m_temp_path = m_target + ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
    m_fd = open(m_temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (m_fd < 0) {
        throw Error("cannot write " + m_target + ": " + std::strerror(errno));
    }
}

AtomicFile::~AtomicFile() {
    if (m_fd >= 0) {
        close(m_fd);
    }
    if (!m_committed) {
        unlink(m_temp_path.c_str());
    }
}

void AtomicFile::write_at(std::uint64_t offset, const void* data, std::uint64_t bytes) {
    const auto* p = static_cast<const char*>(data);
    while (bytes > 0) {
        const ssize_t done = pwrite(m_fd, p, bytes, static_cast<off_t>(offset));
        if (done < 0 && errno == EINTR) {
            continue;
        }
        if (done <= 0) {
            throw Error("cannot write " + m_target + ": " +
                        std::strerror(done < 0 ? errno : ENOSPC));
        }
        p += done;
        offset += static_cast<std::uint64_t>(done);
        bytes -= static_cast<std::uint64_t>(done);
    }
}

void AtomicFile::commit(std::uint64_t file_bytes) {
    const bool sized = ftruncate(m_fd, static_cast<off_t>(file_bytes)) == 0;
    const int size_error = errno;
    const bool closed = close(m_fd) == 0;
    m_fd = -1;
    if (!sized || !closed) {
        throw Error("cannot write " + m_target + ": " + std::strerror(sized ? errno : size_error));
    }
    if (std::rename(m_temp_path.c_str(), m_target.c_str()) != 0) {
        throw Error("cannot write " + m_target + ": " + std::strerror(errno));
    }
    m_committed = true;
}

}  // namespace oomlab
