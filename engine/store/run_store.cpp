// Opening a run store and everything that writes to it.
#include "oomlab/store/run_store.h"

#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "oomlab/common/errors.h"
#include "oomlab/common/files.h"
#include "oomlab/common/paths.h"
#include "oomlab/common/utf8.h"
#include "store/process_owner.h"
#include "store/run_identity.h"
#include "store/run_store_impl.h"
#include "store/schema.h"
#include "store/timestamp.h"

namespace oomlab {
namespace {

// How long a statement waits for another process's write lock. Readers (the GUI) give up
// after this and try again later; a run's writes are kept and retried (see append_metrics),
// so training never fails because the store is briefly busy.
constexpr int kBusyTimeoutMs = 5000;
// How long finishing a run waits in all for its last writes before giving up.
constexpr int kFinishTimeoutMs = 120000;

// A database path must name a file: not empty, not SQLite's in-memory database (a run saved
// there would be gone when the process ends), and not a folder, a FIFO or a device.
void check_database_path(const std::string& path) {
    if (path.empty() || path == ":memory:" || path.rfind("file:", 0) == 0) {
        throw BadInput("--db: \"" + path +
                           "\" is not a database file; give the path of a file (it is created "
                           "if missing)",
                       {"--db"});
    }
    if (std::filesystem::exists(path)) {
        check_input_path(path, "--db");
    }
}

void create_parent_folder(const std::string& path) {
    const auto folder = std::filesystem::path(path).parent_path();
    if (folder.empty()) {
        return;
    }
    std::error_code error;
    std::filesystem::create_directories(folder, error);
    if (error) {
        throw BadInput(folder.string() + ": cannot create the folder for the run store (" +
                       error.message() + "); choose another database path");
    }
}

// Per-connection settings, none of which writes to the file.
void configure_connection(sqlite::Database& database) {
    database.set_busy_timeout_ms(kBusyTimeoutMs);
    database.exec("PRAGMA foreign_keys = ON");  // ON DELETE CASCADE needs it
    // In WAL mode NORMAL never corrupts the file; a power cut may only lose the last commits.
    database.exec("PRAGMA synchronous = NORMAL");
    // Keep the -wal and -shm files when the last connection closes: a reader then never has
    // to create them, so listing and exporting runs works on a full disk, and the space the
    // log already has is reused by the next writes.
    database.persist_wal();
    // Move the log into the database every 64 KiB, so little of it is ever waiting: what a
    // full disk leaves stranded in the log is less than the reserve gives back.
    database.exec("PRAGMA wal_autocheckpoint = 16");
}

// The first write to a file this store accepted: WAL lets readers (the GUI) work while a
// writer (the CLI) appends. The mode is stored in the file, so only the first open switches.
// A new file also gets incremental vacuum (only settable before anything is written), so
// deleting runs gives the space back to the disk.
void use_wal(sqlite::Database& database) {
    if (database.query_int("SELECT count(*) FROM sqlite_master") == 0) {
        database.exec("PRAGMA auto_vacuum = INCREMENTAL");
    }
    if (database.query_text("PRAGMA journal_mode") != "wal") {
        database.query_text("PRAGMA journal_mode = WAL");
    }
}

// Runs left `running` by a writer that no longer exists will never finish. The writer's lock
// says whether it lives (in any process namespace, on any host sharing the file's locks);
// without the lock file, the recorded process is checked.
void mark_interrupted_runs(sqlite::Database& database, const store::WriterLocks& locks) {
    const store::ProcessOwner self = store::current_process();
    std::vector<std::pair<std::int64_t, store::ProcessOwner>> orphans;
    {
        auto select = database.prepare(
            "SELECT id, owner_host, owner_pid, owner_start_ticks FROM runs "
            "WHERE status = 'running'");
        while (select.step()) {
            const std::int64_t run_id = select.column_int(0);
            store::ProcessOwner owner{select.column_text(1), select.column_int(2),
                                      select.column_int(3)};
            const std::optional<bool> held = locks.is_held(run_id);
            if (held ? !*held : store::owner_is_gone(owner, self)) {
                orphans.emplace_back(run_id, std::move(owner));
            }
        }
    }
    if (orphans.empty()) {
        return;  // the usual case: no write lock taken
    }
    try {
        sqlite::Transaction transaction(database);
        // What it did, from the rows it wrote (the summary is written only at the end): its
        // steps (rank 0's), the highest step peak of any rank, the time of its last row.
        auto update = database.prepare(
            "UPDATE runs SET status = 'interrupted', finished_at = ?1, error = ?2, "
            "steps = max(steps, coalesce((SELECT max(step) FROM metrics WHERE run_id = ?3 "
            "AND phase = 'step' AND rank = 0), 0)), "
            "peak_bytes = max(peak_bytes, coalesce((SELECT max(peak_bytes) FROM metrics "
            "WHERE run_id = ?3), 0)), "
            "wall_seconds = max(wall_seconds, coalesce((SELECT max(wall_ms) FROM metrics "
            "WHERE run_id = ?3), 0) / 1000.0) "
            "WHERE id = ?3 AND status = 'running'");
        const std::string now = store::utc_now();
        for (const auto& [run_id, owner] : orphans) {
            const std::string error = "the process writing this run (pid " +
                                      std::to_string(owner.pid) + " on " + owner.host +
                                      ") ended before it finished";
            update.bind_text(1, now).bind_text(2, error).bind_int(3, run_id).run();
        }
        transaction.commit();
    } catch (const sqlite::SqliteError& error) {
        // Reading must never need a write: when another process holds the write lock, the
        // disk is full or the file is read-only, marking waits for a later open.
        if (!store::is_transient_write_failure(error.code())) {
            throw;
        }
    }
}

// The errors that mean "this file cannot be our database", as BadInput naming the file.
std::optional<BadInput> unusable_file(const std::string& path, const sqlite::SqliteError& error) {
    switch (error.code()) {
        case SQLITE_NOTADB:
        case SQLITE_CORRUPT:
            return BadInput(path +
                            ": not an OOM Lab run database (the file is not a valid SQLite "
                            "database); choose another file or move this one away");
        case SQLITE_CANTOPEN:
        case SQLITE_PERM:
        case SQLITE_READONLY:
            return BadInput(path +
                            ": cannot open the run store for writing; check that the path is a "
                            "file in a folder you may write to");
        default:
            return std::nullopt;
    }
}

}  // namespace

namespace store {

void throw_no_such_run(const std::string& path, std::int64_t run_id) {
    throw Error("run store " + path + ": no run with id " + std::to_string(run_id));
}

bool is_transient_write_failure(int sqlite_code) {
    return sqlite_code == SQLITE_BUSY || sqlite_code == SQLITE_LOCKED ||
           sqlite_code == SQLITE_FULL || sqlite_code == SQLITE_READONLY ||
           sqlite_code == SQLITE_CANTOPEN || sqlite_code == SQLITE_IOERR;
}

void retry_while_busy(int timeout_ms, const std::function<void()>& write) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (true) {
        try {
            write();
            return;
        } catch (const sqlite::SqliteError& error) {
            if (error.code() != SQLITE_BUSY || std::chrono::steady_clock::now() >= deadline) {
                throw;
            }
            // Some refusals come at once, without SQLite's own wait: do not spin on them.
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
    }
}

}  // namespace store

void RunStore::Impl::set_text(std::int64_t run_id, const std::string& column,
                              const std::string& text) {
    require_utf8(text, "run " + column);
    user_write([&] {
        database.prepare("UPDATE runs SET " + column + " = ?1 WHERE id = ?2")
            .bind_text(1, text)
            .bind_int(2, run_id)
            .run();
    });
    if (database.changes() == 0) {
        store::throw_no_such_run(database.path(), run_id);
    }
}

void RunStore::Impl::user_write(const std::function<void()>& write) {
    if (!read_only_because.empty()) {
        throw BadInput(read_only_because);
    }
    try {
        write();
    } catch (const sqlite::SqliteError& error) {
        if (error.code() == SQLITE_READONLY) {
            throw BadInput(error.what());
        }
        throw;
    }
}

void RunStore::Impl::with_room(const std::function<void()>& write) {
    try {
        write();
    } catch (const sqlite::SqliteError& error) {
        if (error.code() != SQLITE_FULL || !reserve.release()) {
            throw;
        }
        try {
            database.exec("PRAGMA wal_checkpoint(TRUNCATE)");
        } catch (const sqlite::SqliteError&) {
            // A reader holds the log: the write below may still fit in the reserve's space.
        }
        write();
    }
}

void RunStore::Impl::write_pending(int wait_ms) {
    if (pending_metrics.empty() && pending_events.empty()) {
        return;
    }
    // While training, a busy store must not hold the step up: try briefly, keep the rows
    // and try again with the next batch.
    constexpr int kTrainingWaitMs = 200;
    database.set_busy_timeout_ms(wait_ms > 0 ? kBusyTimeoutMs : kTrainingWaitMs);
    const auto write = [&] {
        sqlite::Transaction transaction(database);
        for (const auto& [run_id, row] : pending_metrics) {
            insert_metric.bind_int(1, run_id);
            store::bind_row(insert_metric, store::kMetricColumns, row, 2);
            insert_metric.run();
        }
        if (!pending_events.empty()) {
            auto insert =
                database.prepare("INSERT INTO events (run_id, created_at, " +
                                 store::column_list(store::kEventColumns) + ") VALUES (?1, ?2, " +
                                 store::parameter_list(store::kEventColumns, 3) + ")");
            insert.bind_text(2, store::utc_now());
            for (const auto& [run_id, event] : pending_events) {
                insert.bind_int(1, run_id);
                store::bind_row(insert, store::kEventColumns, event, 3);
                insert.run();
            }
        }
        transaction.commit();
    };
    try {
        if (wait_ms > 0) {
            store::retry_while_busy(wait_ms, write);
        } else {
            write();
        }
    } catch (const sqlite::SqliteError& error) {
        database.set_busy_timeout_ms(kBusyTimeoutMs);
        if (error.code() == SQLITE_BUSY && wait_ms == 0) {
            return;  // kept for the next write
        }
        // Rows that cannot be written now never will be (a run that is not there, a full
        // disk): they must not block the writes after them.
        pending_metrics.clear();
        pending_events.clear();
        throw;
    }
    database.set_busy_timeout_ms(kBusyTimeoutMs);
    pending_metrics.clear();
    pending_events.clear();
}

RunStore::RunStore(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
RunStore::~RunStore() = default;
RunStore::RunStore(RunStore&&) noexcept = default;
RunStore& RunStore::operator=(RunStore&&) noexcept = default;

RunStore RunStore::open(const std::string& path) {
    check_database_path(path);
    create_parent_folder(path);
    try {
        sqlite::Database database = sqlite::Database::open(path);
        configure_connection(database);
        // Everything before this line only reads: a file that is refused keeps every byte.
        store::refuse_unless_run_store(database);
        // Switching a new file to WAL is refused at once, without the busy wait, to a
        // connection that races another for it (the ranks of a run opening a new file).
        store::retry_while_busy(kFinishTimeoutMs, [&] { use_wal(database); });
        const int version = store::migrate_schema(database);
        store::WriterLocks locks(path);
        mark_interrupted_runs(database, locks);
        sqlite::Statement insert_metric =
            database.prepare(store::insert_sql("metrics", store::kMetricColumns, "run_id"));
        store::DiskReserve reserve(path);
        reserve.ensure();
        return RunStore(std::unique_ptr<Impl>(new Impl{std::move(database),
                                                       version,
                                                       std::move(insert_metric),
                                                       std::move(locks),
                                                       std::move(reserve),
                                                       {},
                                                       {},
                                                       {}}));
    } catch (const sqlite::SqliteError& error) {
        if (auto bad_input = unusable_file(path, error)) {
            throw *bad_input;
        }
        if (store::disk_is_full(path)) {
            return open_on_full_disk(path);
        }
        throw;
    }
}

RunStore RunStore::open_on_full_disk(const std::string& path) {
    sqlite::Database database = sqlite::Database::open_immutable(path);
    store::refuse_unless_run_store(database);
    const int version = static_cast<int>(database.query_int("PRAGMA user_version"));
    const std::string full = "the disk holding the run store " + path + " is full";
    if (version != store::latest_schema_version()) {
        throw Error(full +
                    ", and the file must be upgraded to be read by this version; free "
                    "space on that disk, then try again");
    }
    sqlite::Statement insert_metric =
        database.prepare(store::insert_sql("metrics", store::kMetricColumns, "run_id"));
    auto impl = std::unique_ptr<Impl>(new Impl{std::move(database),
                                               version,
                                               std::move(insert_metric),
                                               store::WriterLocks(path),
                                               store::DiskReserve(path),
                                               {},
                                               {},
                                               full + " and holds nothing beside it to change the "
                                                      "file with (not even to delete a run): "
                                                      "free space on that disk (other files), "
                                                      "then try again"});
    return RunStore(std::move(impl));
}

std::string RunStore::default_path() {
    return user_data_dir() + "/runs.sqlite";
}

const std::string& RunStore::path() const {
    return m_impl->database.path();
}

int RunStore::schema_version() const {
    return m_impl->schema_version;
}

std::int64_t RunStore::create_run(const NewRun& run) {
    require_one_line(run.name, "run name");
    const store::ProcessOwner owner = store::current_process();
    auto insert = m_impl->database.prepare(
        "INSERT INTO runs (status, created_at, owner_host, owner_pid, owner_start_ticks, uid, " +
        store::column_list(store::kNewRunColumns) + ") VALUES ('running', ?1, ?2, ?3, ?4, ?5, " +
        store::parameter_list(store::kNewRunColumns, 6) + ")");
    const std::string uid = store::new_run_uid();
    // Waits for a busy store; a full disk fails here, before the run exists (the reserve is
    // for ending runs and deleting them, not for starting them). The writer's lock is taken
    // before the row is committed: a reader opening the store in between would otherwise see
    // a `running` row without a live writer and mark it interrupted.
    std::int64_t run_id = 0;
    m_impl->user_write([&] {
        store::retry_while_busy(kFinishTimeoutMs, [&] {
            sqlite::Transaction transaction(m_impl->database);
            insert.bind_text(1, store::utc_now())
                .bind_text(2, owner.host)
                .bind_int(3, owner.pid)
                .bind_int(4, owner.start_ticks)
                .bind_text(5, uid);
            store::bind_row(insert, store::kNewRunColumns, run, 6);
            insert.run();
            run_id = m_impl->database.last_insert_id();
            m_impl->locks.hold(run_id);
            try {
                transaction.commit();
            } catch (const sqlite::SqliteError&) {
                m_impl->locks.release(run_id);  // the id may go to another run
                throw;
            }
        });
    });
    return run_id;
}

void RunStore::append_metrics(std::int64_t run_id, const std::vector<MetricRow>& rows) {
    for (const MetricRow& row : rows) {
        m_impl->pending_metrics.emplace_back(run_id, row);
    }
    m_impl->write_pending(/*wait_ms=*/0);
}

void RunStore::add_event(std::int64_t run_id, const EventRow& event) {
    m_impl->pending_events.emplace_back(run_id, event);
    m_impl->write_pending(/*wait_ms=*/0);
}

void RunStore::finish_run(std::int64_t run_id, const RunOutcome& outcome) {
    const auto& columns = store::outcome_columns();
    const int id_parameter = static_cast<int>(columns.size()) + 3;
    const std::string sql = "UPDATE runs SET finished_at = ?1, " +
                            store::assignment_list(columns, 2) + " WHERE id = ?" +
                            std::to_string(id_parameter);

    // The run's last metrics and events go first; they may have waited for a busy store. On a
    // full disk they cannot be saved, but the run's ending still must be: the one-row update
    // reuses space the write-ahead log already has.
    try {
        m_impl->write_pending(kFinishTimeoutMs);
    } catch (const sqlite::SqliteError& error) {
        if (error.code() != SQLITE_FULL) {
            throw;
        }
        m_impl->pending_metrics.clear();
        m_impl->pending_events.clear();
    }
    auto update = m_impl->database.prepare(sql);
    update.bind_text(1, store::utc_now());
    store::bind_row(update, columns, outcome, 2);
    m_impl->with_room([&] {
        store::retry_while_busy(kFinishTimeoutMs,
                                [&] { update.bind_int(id_parameter, run_id).run(); });
    });
    if (m_impl->database.changes() == 0) {
        store::throw_no_such_run(path(), run_id);
    }
    // The details come after the ending, which must get through; on a full disk they are lost.
    try {
        store::retry_while_busy(kFinishTimeoutMs,
                                [&] { m_impl->write_details(run_id, outcome, /*rank=*/0); });
    } catch (const sqlite::SqliteError& error) {
        if (!store::is_transient_write_failure(error.code())) {
            throw;
        }
    }
    m_impl->locks.release(run_id);
}

void RunStore::finish_rank(std::int64_t run_id, int rank, const RunOutcome& outcome) {
    m_impl->write_pending(kFinishTimeoutMs);
    store::retry_while_busy(kFinishTimeoutMs,
                            [&] { m_impl->write_details(run_id, outcome, rank); });
}

bool RunStore::delete_run(std::int64_t run_id) {
    sqlite::Database& database = m_impl->database;
    const std::optional<RunRecord> run = find_run(run_id);
    if (!run) {
        return false;
    }
    // Deleting a run under its trainer would make the trainer fail at its next write.
    if (run->outcome.status == RunStatus::Running && m_impl->locks.is_held(run_id) != false) {
        auto owner = database.prepare("SELECT owner_host, owner_pid FROM runs WHERE id = ?1");
        owner.bind_int(1, run_id).step();
        throw BadInput("run " + std::to_string(run_id) + " of " + path() +
                       " is still training (process " + std::to_string(owner.column_int(1)) +
                       " on " + owner.column_text(0) +
                       "): stop it first (Ctrl+C where it runs, or kill " +
                       std::to_string(owner.column_int(1)) +
                       "; it saves the run as cancelled), then delete it");
    }
    m_impl->user_write([&] {
        // A few hundred rows a transaction, each moved into the database before the next: on a
        // full disk the log never needs more room than it has, so deleting is how to free space.
        constexpr int kRowsPerTransaction = 500;
        auto delete_some = database.prepare(
            "DELETE FROM metrics WHERE id IN (SELECT id FROM metrics WHERE run_id = ?1 LIMIT ?2)");
        std::int64_t deleted = 0;
        do {
            m_impl->with_room(
                [&] { delete_some.bind_int(1, run_id).bind_int(2, kRowsPerTransaction).run(); });
            deleted = database.changes();
            database.exec("PRAGMA wal_checkpoint(PASSIVE)");
        } while (deleted > 0);
        // Events go with the run (ON DELETE CASCADE).
        m_impl->with_room(
            [&] { database.prepare("DELETE FROM runs WHERE id = ?1").bind_int(1, run_id).run(); });
        // Give the freed pages back to the disk (stores made before incremental vacuum keep them
        // for later runs), then the space the reserve needs.
        try {
            database.exec("PRAGMA incremental_vacuum");
            database.exec("PRAGMA wal_checkpoint(TRUNCATE)");
        } catch (const sqlite::SqliteError&) {
            // The run is deleted; the space comes back at the next write.
        }
    });
    m_impl->reserve.ensure();
    return true;
}

void RunStore::rename_run(std::int64_t run_id, const std::string& name) {
    require_one_line(name, "run name");
    m_impl->set_text(run_id, "name", name);
}

void RunStore::set_notes(std::int64_t run_id, const std::string& notes) {
    m_impl->set_text(run_id, "notes", notes);
}

void RunStore::set_tags(std::int64_t run_id, const std::string& tags) {
    require_one_line(tags, "run tags");
    m_impl->set_text(run_id, "tags", tags);
}

}  // namespace oomlab
