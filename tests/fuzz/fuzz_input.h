// Fuzz inputs as files: the readers take paths, so each input goes into an in-memory file.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace oomlab::fuzz {

class MemoryFile {
public:
    MemoryFile(const std::uint8_t* data, std::size_t size) : m_fd(memfd_create("oomlab-fuzz", 0)) {
        for (std::size_t written = 0; written < size;) {
            const ssize_t count = write(m_fd, data + written, size - written);
            if (count <= 0) {
                break;
            }
            written += static_cast<std::size_t>(count);
        }
    }
    ~MemoryFile() { close(m_fd); }
    MemoryFile(const MemoryFile&) = delete;
    MemoryFile& operator=(const MemoryFile&) = delete;

    std::string path() const { return "/proc/self/fd/" + std::to_string(m_fd); }

private:
    int m_fd;
};

}  // namespace oomlab::fuzz
