#include "disk_reserve.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <filesystem>
#include <utility>

namespace oomlab::store {

DiskReserve::DiskReserve(std::string database_path)
    : m_path(std::move(database_path) + "-reserve") {}

void DiskReserve::ensure() const {
    struct stat info {};
    if (stat(m_path.c_str(), &info) == 0 && info.st_size >= kBytes) {
        return;
    }
    const int fd = open(m_path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
        return;
    }
    // Really allocated (not a sparse file), or the space would not be there to give back.
    if (posix_fallocate(fd, 0, kBytes) != 0) {
        close(fd);
        unlink(m_path.c_str());
        return;
    }
    close(fd);
}

bool disk_is_full(const std::string& database_path) {
    constexpr unsigned long long kShmBytes = 32 << 10;
    const std::string folder = std::filesystem::path(database_path).parent_path().string();
    struct statvfs space {};
    return statvfs(folder.empty() ? "." : folder.c_str(), &space) == 0 &&
           static_cast<unsigned long long>(space.f_bavail) * space.f_frsize < kShmBytes;
}

bool DiskReserve::release() const {
    return unlink(m_path.c_str()) == 0;
}

}  // namespace oomlab::store
