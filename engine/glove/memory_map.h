// Page-level memory for large tables: an anonymous reservation that costs no resident memory
// until written, and a read-only map of a whole file.
#pragma once

#include <cstddef>
#include <string>

namespace oomlab::glove_detail {

// Reserves `bytes` of address space (MAP_NORESERVE): pages become resident only when written,
// so a generous upper bound costs nothing and the buffer never has to move or be copied.
class AnonymousRegion {
public:
    AnonymousRegion() = default;
    explicit AnonymousRegion(std::size_t bytes);
    ~AnonymousRegion();
    AnonymousRegion(AnonymousRegion&& other) noexcept;
    AnonymousRegion& operator=(AnonymousRegion&& other) noexcept;
    AnonymousRegion(const AnonymousRegion&) = delete;
    AnonymousRegion& operator=(const AnonymousRegion&) = delete;

    void* data() const { return m_data; }
    std::size_t size() const { return m_size; }

    // Gives back the pages past `bytes` (rounded up to a page).
    void shrink(std::size_t bytes);

private:
    void release();
    void* m_data = nullptr;
    std::size_t m_size = 0;
};

// A whole file mapped read-only and shared with the page cache.
class MappedFile {
public:
    MappedFile() = default;
    // Throws BadInput naming the file when it cannot be opened or mapped.
    explicit MappedFile(const std::string& path);
    ~MappedFile();
    MappedFile(MappedFile&& other) noexcept;
    MappedFile& operator=(MappedFile&& other) noexcept;
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    const char* data() const { return m_data; }
    std::size_t size() const { return m_size; }

private:
    void release();
    const char* m_data = nullptr;
    std::size_t m_size = 0;
};

}  // namespace oomlab::glove_detail
