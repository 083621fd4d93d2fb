// Reads a file as runs of whole lines through one reusable buffer, so memory stays bounded
// whatever the file size. Each buffer fill is split between threads: copying out of the page
// cache is real work, and it would otherwise leave the other cores idle between blocks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace oomlab::glove_detail {

class BlockReader {
public:
    // Throws BadInput naming the file when it cannot be opened or is not a regular file.
    BlockReader(const std::string& path, std::size_t block_bytes, int threads);
    ~BlockReader();
    BlockReader(const BlockReader&) = delete;
    BlockReader& operator=(const BlockReader&) = delete;

    std::uint64_t file_size() const { return m_size; }
    // Bytes handed out so far.
    std::uint64_t consumed() const { return m_read_offset - (m_filled - m_handed_end); }
    bool at_end() const { return m_read_offset == m_size && m_handed_end == m_filled; }

    // The next run of whole lines (at the end of the file the last line may lack its '\n');
    // empty when everything was handed out. Invalidates the previous run. A line longer than
    // the buffer grows it.
    std::string_view next();

private:
    void fill();

    std::string m_path;
    int m_fd = -1;
    int m_threads = 1;
    std::uint64_t m_size = 0;
    std::uint64_t m_read_offset = 0;
    std::vector<char> m_buffer;
    std::size_t m_filled = 0;      // valid bytes in the buffer
    std::size_t m_handed_end = 0;  // end of the run handed out last
};

}  // namespace oomlab::glove_detail
