#include "memory_map.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "oomlab/common/errors.h"

namespace oomlab::glove_detail {
namespace {

std::size_t page_size() {
    static const std::size_t size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    return size;
}

std::size_t round_up_to_page(std::size_t bytes) {
    const std::size_t page = page_size();
    return (bytes + page - 1) / page * page;
}

}  // namespace

AnonymousRegion::AnonymousRegion(std::size_t bytes) {
    if (bytes == 0) {
        return;
    }
    const std::size_t length = round_up_to_page(bytes);
    void* data = mmap(nullptr, length, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (data == MAP_FAILED) {
        throw Error("cannot reserve " + std::to_string(length >> 20) +
                    " MiB of address space for the word vectors: " + std::strerror(errno));
    }
    m_data = data;
    m_size = length;
}

AnonymousRegion::~AnonymousRegion() {
    release();
}

AnonymousRegion::AnonymousRegion(AnonymousRegion&& other) noexcept
    : m_data(std::exchange(other.m_data, nullptr)), m_size(std::exchange(other.m_size, 0)) {}

AnonymousRegion& AnonymousRegion::operator=(AnonymousRegion&& other) noexcept {
    if (this != &other) {
        release();
        m_data = std::exchange(other.m_data, nullptr);
        m_size = std::exchange(other.m_size, 0);
    }
    return *this;
}

void AnonymousRegion::shrink(std::size_t bytes) {
    const std::size_t keep = round_up_to_page(bytes);
    if (keep >= m_size) {
        return;
    }
    munmap(static_cast<char*>(m_data) + keep, m_size - keep);
    m_size = keep;
    if (keep == 0) {
        m_data = nullptr;
    }
}

void AnonymousRegion::release() {
    if (m_data != nullptr) {
        munmap(m_data, m_size);
        m_data = nullptr;
        m_size = 0;
    }
}

MappedFile::MappedFile(const std::string& path) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        throw bad_input_at(path, 0, std::string("cannot open: ") + std::strerror(errno));
    }
    struct stat info {};
    if (fstat(fd, &info) != 0) {
        const int error = errno;
        close(fd);
        throw bad_input_at(path, 0, std::string("cannot read: ") + std::strerror(error));
    }
    const auto length = static_cast<std::size_t>(info.st_size);
    if (length > 0) {
        void* data = mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, 0);
        if (data == MAP_FAILED) {
            const int error = errno;
            close(fd);
            throw bad_input_at(path, 0, std::string("cannot map: ") + std::strerror(error));
        }
        m_data = static_cast<const char*>(data);
        m_size = length;
    }
    close(fd);  // the mapping keeps the file alive
}

MappedFile::~MappedFile() {
    release();
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : m_data(std::exchange(other.m_data, nullptr)), m_size(std::exchange(other.m_size, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
    if (this != &other) {
        release();
        m_data = std::exchange(other.m_data, nullptr);
        m_size = std::exchange(other.m_size, 0);
    }
    return *this;
}

void MappedFile::release() {
    if (m_data != nullptr) {
        munmap(const_cast<char*>(m_data), m_size);
        m_data = nullptr;
        m_size = 0;
    }
}

}  // namespace oomlab::glove_detail
