// A snapshot file read on a thread of its own, a few chunks ahead of the pickle reader: the
// disk's reads and gzip's inflating (4 s of a 1 GB snapshot's 9.5) go to the second core while
// the first parses.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "snapshot_input.h"

namespace oomlab::snapshot {

class ReadAhead : public PickleInput {
public:
    // Reads `file` from where it is on; nothing else may read it until this is gone.
    explicit ReadAhead(SnapshotFileInput& file);
    ~ReadAhead() override;  // stops the thread, whatever it was doing
    ReadAhead(const ReadAhead&) = delete;
    ReadAhead& operator=(const ReadAhead&) = delete;

    // Throws what reading the file threw (BadInput, bad_alloc) once the bytes before it are read.
    std::size_t read(char* into, std::size_t most) override;
    std::uint64_t size_bound() const override { return m_size_bound; }
    // How far the file had been read when the bytes handed out so far were read from it.
    std::uint64_t file_position() const { return m_current.file_position; }

private:
    struct Chunk {
        std::string bytes;
        std::uint64_t file_position = 0;
    };
    void read_file();

    static constexpr std::size_t kChunkBytes = std::size_t(1) << 20;
    static constexpr std::size_t kChunksAhead = 4;

    SnapshotFileInput& m_file;
    const std::uint64_t m_size_bound;
    Chunk m_current;       // the reader's
    std::size_t m_at = 0;  // in m_current
    std::mutex m_mutex;    // guards what follows, to the thread
    std::condition_variable m_changed;
    std::deque<Chunk> m_ready;
    std::vector<std::string> m_spare;  // read chunks' room, used again
    bool m_ended = false;              // the file's end or an error reached
    bool m_stop = false;
    std::exception_ptr m_error;
    std::thread m_thread;  // last: started once the rest is made
};

}  // namespace oomlab::snapshot
