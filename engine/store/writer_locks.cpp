#include "writer_locks.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <utility>

namespace oomlab::store {
namespace {

struct flock byte_of(std::int64_t run_id, short type) {
    struct flock lock {};
    lock.l_type = type;
    lock.l_whence = SEEK_SET;
    lock.l_start = static_cast<off_t>(run_id);
    lock.l_len = 1;
    lock.l_pid = 0;  // required for OFD locks
    return lock;
}

}  // namespace

std::string writer_locks_path(const std::string& database_path) {
    return database_path + "-writers";
}

WriterLocks::WriterLocks(const std::string& database_path) {
    const std::string path = writer_locks_path(database_path);
    m_fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (m_fd < 0) {
        m_fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);  // testing works read-only
    }
}

WriterLocks::~WriterLocks() {
    if (m_fd >= 0) {
        close(m_fd);
    }
}

WriterLocks::WriterLocks(WriterLocks&& other) noexcept : m_fd(std::exchange(other.m_fd, -1)) {}

WriterLocks& WriterLocks::operator=(WriterLocks&& other) noexcept {
    if (this != &other) {
        if (m_fd >= 0) {
            close(m_fd);
        }
        m_fd = std::exchange(other.m_fd, -1);
    }
    return *this;
}

bool WriterLocks::hold(std::int64_t run_id) {
    struct flock lock = byte_of(run_id, F_WRLCK);
    return m_fd >= 0 && fcntl(m_fd, F_OFD_SETLK, &lock) == 0;
}

void WriterLocks::release(std::int64_t run_id) {
    struct flock lock = byte_of(run_id, F_UNLCK);
    if (m_fd >= 0) {
        fcntl(m_fd, F_OFD_SETLK, &lock);
    }
}

void WriterLocks::wait_to_make() {
    struct flock lock = byte_of(0, F_WRLCK);
    if (m_fd >= 0) {
        while (fcntl(m_fd, F_OFD_SETLKW, &lock) != 0 && errno == EINTR) {
        }
    }
}

std::optional<bool> WriterLocks::is_held(std::int64_t run_id) const {
    // A read lock conflicts with the writer's write lock and works on a read-only descriptor.
    struct flock lock = byte_of(run_id, F_RDLCK);
    if (m_fd < 0 || fcntl(m_fd, F_OFD_GETLK, &lock) != 0) {
        return std::nullopt;
    }
    return lock.l_type != F_UNLCK;
}

}  // namespace oomlab::store
