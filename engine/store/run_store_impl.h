// RunStore's private state, shared by the files that implement it (writes in
// run_store.cpp, reads in run_queries.cpp).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "disk_reserve.h"
#include "oomlab/store/run_store.h"
#include "sqlite.h"
#include "table_declarations.h"
#include "writer_locks.h"

namespace oomlab {

struct RunStore::Impl {
    sqlite::Database database;
    int schema_version = 0;
    sqlite::Statement insert_metric;  // prepared once: append_metrics runs it for every row
    store::WriterLocks locks;         // held for the runs this store writes
    store::DiskReserve reserve;       // space to end a run and delete runs on a full disk

    // Writes waiting for another process to release the write lock, oldest first.
    std::vector<std::pair<std::int64_t, MetricRow>> pending_metrics;
    std::vector<std::pair<std::int64_t, EventRow>> pending_events;

    // Why this store only reads (its disk was full when it opened); empty when it writes.
    std::string read_only_because{};

    // Runs a write the user asked for (create, delete, rename a run): on a store that cannot
    // be written, the user's to fix: BadInput saying why.
    void user_write(const std::function<void()>& write);

    // Writes everything pending in one transaction. A busy store keeps it pending (retried
    // by the next write), unless `wait_ms` > 0: then it waits up to that long in all.
    void write_pending(int wait_ms);

    // Runs `write`; when the disk is full, gives the reserve back, moves the write-ahead log
    // into the database and tries once more. For the writes that must get through on a full
    // disk: ending a run, deleting runs.
    void with_room(const std::function<void()>& write);

    // Writes where the run's bytes came from (by module, the staircase, the free space at an
    // OOM), replacing what was there.
    void write_details(std::int64_t run_id, const RunOutcome& outcome, int rank);
    // INSERT INTO events, its run as ?1, its time as ?2 and kEventColumns from ?3.
    sqlite::Statement prepare_insert_event();
    // Reads them back into `run` (rank 0's, and every rank's memory).
    void read_details(RunRecord& run) const;
    void read_ranks(RunRecord& run) const;

    // Sets a run's name, notes or tags (`column`); the text must be UTF-8.
    void set_text(std::int64_t run_id, const std::string& column, const std::string& text);
};

namespace store {

// How long a statement waits for another process's write lock. Readers (the GUI) give up
// after this and try again later; a run's writes are kept and retried (see append_metrics),
// so training never fails because the store is briefly busy.
inline constexpr int kBusyTimeoutMs = 5000;
// How long finishing a run waits in all for its last writes before giving up.
inline constexpr int kFinishTimeoutMs = 120000;

[[noreturn]] void throw_no_such_run(const std::string& path, std::int64_t run_id);

// A write that failed for a reason outside this store's control (another writer holds the
// lock, the disk is full, the file or folder is read-only): reads must carry on regardless.
bool is_transient_write_failure(int sqlite_code);

// Runs `write` again while it fails with SQLITE_BUSY, for up to `timeout_ms` in all.
void retry_while_busy(int timeout_ms, const std::function<void()>& write);

}  // namespace store
}  // namespace oomlab
