#include "oomlab/common/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "oomlab/common/errors.h"

namespace oomlab {

namespace {

constexpr const char* kTempInfix = ".tmp-";

// The writer's process id in a temporary file's name after "TARGET.tmp-" ("123-0"), or 0.
pid_t writer_of(const std::string& rest) {
    pid_t pid = 0;
    const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), pid);
    return error == std::errc() && end != rest.data() + rest.size() && *end == '-' && pid > 0 ? pid
                                                                                              : 0;
}

}  // namespace

std::size_t AtomicFile::remove_abandoned(const std::string& target) {
    namespace fs = std::filesystem;
    const fs::path path(target);
    const std::string prefix = path.filename().string() + kTempInfix;
    const fs::path folder = path.has_parent_path() ? path.parent_path() : fs::path(".");
    std::error_code error;
    std::size_t removed = 0;
    for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
        const std::string name = it->path().filename().string();
        if (name.rfind(prefix, 0) != 0) {
            continue;
        }
        const pid_t writer = writer_of(name.substr(prefix.size()));
        struct stat info {};
        const bool gone = writer > 0 && kill(writer, 0) != 0 && errno == ESRCH;
        if (gone && lstat(it->path().c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
            info.st_mtime < time(nullptr) - 60 && unlink(it->path().c_str()) == 0) {
            ++removed;
        }
    }
    return removed;
}

AtomicFile::AtomicFile(std::string target) : m_target(std::move(target)) {
    remove_abandoned(m_target);
    static std::atomic<unsigned> counter{0};
    m_temp_path =
        m_target + kTempInfix + std::to_string(getpid()) + "-" + std::to_string(counter++);
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
