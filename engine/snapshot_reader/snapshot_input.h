// A snapshot file read a chunk at a time, gzipped (x.pickle.gz, as large snapshots are often
// kept; a profiler's trace.json.gz) or not: zlib reads both, so nothing is unpacked to disk and
// the whole file is never in memory at once. (Bytes already in memory are read the same way:
// read_pickle(std::string_view).)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "pickle_reader.h"

namespace oomlab::snapshot {

class SnapshotFileInput : public PickleInput {
public:
    // Throws BadInput naming `path` when it cannot be opened. Reading more than `most` bytes
    // (unpacked) throws BadInput.
    SnapshotFileInput(const std::string& path, std::uint64_t most);
    ~SnapshotFileInput() override;
    SnapshotFileInput(const SnapshotFileInput&) = delete;
    SnapshotFileInput& operator=(const SnapshotFileInput&) = delete;

    std::size_t read(char* into, std::size_t most) override;
    std::uint64_t size_bound() const override;

    // The first `count` bytes (fewer if the file is shorter), still to be read after.
    std::string peek(std::size_t count);
    // Everything not yet read; throws BadInput naming what it is when that passes `most` bytes.
    std::string read_rest(std::uint64_t most, const std::string& what);
    // How far reading has come in the file itself (its compressed bytes, when gzipped).
    std::uint64_t file_position() const;
    std::uint64_t file_size() const { return m_file_size; }
    bool gzipped() const;

private:
    std::string m_path;
    std::uint64_t m_most;
    std::uint64_t m_file_size = 0;
    std::uint64_t m_unpacked = 0;
    void* m_file = nullptr;  // zlib's gzFile
    std::string m_peeked;
    std::size_t m_peeked_at = 0;
};

// Bytes already in memory (a test's, a fuzzer's), read as a file is.
class StringInput : public PickleInput {
public:
    explicit StringInput(std::string_view data) : m_data(data) {}
    std::size_t read(char* into, std::size_t most) override;
    std::uint64_t size_bound() const override { return m_data.size(); }

private:
    std::string_view m_data;
    std::size_t m_at = 0;
};

}  // namespace oomlab::snapshot
