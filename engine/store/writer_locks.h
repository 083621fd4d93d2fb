// Which runs have a live writer. The process writing a run holds a lock on one byte (the
// run's id) of "<database>-writers"; the kernel releases it when the process ends, however it
// ends. Unlike a recorded host and pid, this also holds for a writer in another PID namespace
// (a container) and, on file systems that share locks between hosts, on another host.
//
// The locks are open file description locks (F_OFD_SETLK): two stores opened in one process
// see each other's locks, and closing this file never touches SQLite's own locks on the
// database (which a plain POSIX lock on the database file would).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace oomlab::store {

class WriterLocks {
public:
    // Opens (creating if it can) the lock file beside `database_path`; without it (a
    // read-only folder), available() is false and callers fall back to the recorded pid.
    explicit WriterLocks(const std::string& database_path);
    ~WriterLocks();
    WriterLocks(WriterLocks&& other) noexcept;
    WriterLocks& operator=(WriterLocks&& other) noexcept;
    WriterLocks(const WriterLocks&) = delete;
    WriterLocks& operator=(const WriterLocks&) = delete;

    bool available() const { return m_fd >= 0; }

    // Marks this store as the writer of `run_id` until release() or until the store closes.
    bool hold(std::int64_t run_id);
    void release(std::int64_t run_id);

    // Whether some open store (in any process) writes `run_id`; nullopt when unknown.
    std::optional<bool> is_held(std::int64_t run_id) const;

    // One process at a time makes a new database (byte 0: no run has id 0): waits for any
    // other, until done_making(). Does nothing without the lock file.
    void wait_to_make();
    void done_making() { release(0); }

private:
    int m_fd = -1;
};

// The lock file of a database.
std::string writer_locks_path(const std::string& database_path);

}  // namespace oomlab::store
