// Opening a run store: the path checked, the file refused unless it is one, WAL and the
// schema's migrations, runs left running by a writer that is gone, and what is left to read
// when the disk is full.
#include "oomlab/store/run_store.h"

#include <sqlite3.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <utility>

#include "oomlab/common/errors.h"
#include "oomlab/common/files.h"
#include "oomlab/common/paths.h"
#include "oomlab/store/timestamp.h"
#include "process_owner.h"
#include "run_store_impl.h"
#include "schema.h"

namespace oomlab {
namespace {

using store::kBusyTimeoutMs;
using store::kFinishTimeoutMs;

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

// Whether opening `path` makes a new database: the file is not there or is empty.
bool makes_a_database(const std::string& path) {
    std::error_code error;
    const auto size = std::filesystem::file_size(path, error);
    return error || size == 0;
}

// Ends a run whose writer died with `status` and `error`, with what its rows say it did (the
// summary is written only at the end): its steps (rank 0's), the highest step peak of any
// rank, the time of its last row, its last loss and validation accuracy. Only a run still
// `running`, or only `interrupted` (which says less than `failed` with the cause a launcher saw),
// is changed.
void end_orphan(sqlite::Database& database, std::int64_t run_id, const char* status,
                const std::string& error) {
    database
        .prepare(
            "UPDATE runs SET status = ?4, finished_at = ?1, error = ?2, "
            "steps = max(steps, coalesce((SELECT max(step) FROM metrics WHERE run_id = ?3 "
            "AND phase = 'step' AND rank = 0), 0)), "
            "peak_bytes = max(peak_bytes, coalesce((SELECT max(peak_bytes) FROM metrics "
            "WHERE run_id = ?3), 0)), "
            "wall_seconds = max(wall_seconds, coalesce((SELECT max(wall_ms) FROM metrics "
            "WHERE run_id = ?3), 0) / 1000.0), "
            "final_train_loss = coalesce(final_train_loss, (SELECT avg(loss) FROM "
            "(SELECT loss FROM metrics WHERE run_id = ?3 AND phase = 'step' AND rank = 0 "
            "AND loss IS NOT NULL ORDER BY step DESC LIMIT ?5))), "
            "val_accuracy = coalesce(val_accuracy, (SELECT accuracy FROM metrics "
            "WHERE run_id = ?3 AND phase = 'eval' AND rank = 0 AND accuracy IS NOT NULL "
            "ORDER BY step DESC LIMIT 1)) "
            "WHERE id = ?3 AND status IN ('running', 'interrupted')")
        .bind_text(1, store::utc_now())
        .bind_text(2, error)
        .bind_int(3, run_id)
        .bind_text(4, status)
        .bind_int(5, kFinalLossSteps)
        .run();
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
        const std::string now = store::utc_now();
        for (const auto& [run_id, owner] : orphans) {
            const std::string error = "the process writing this run (pid " +
                                      std::to_string(owner.pid) + " on " + owner.host +
                                      ") ended before it finished";
            end_orphan(database, run_id, "interrupted", error);
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

// Why an existing, readable file cannot be written here (a read-only mount, a copied file
// without write permission), or nullopt. SQLite must write beside a database in WAL mode to
// open it as usual (its -shm file), so such a file is opened read-only instead.
std::optional<std::string> why_not_writable(const std::string& path) {
    std::string folder = std::filesystem::path(path).parent_path().string();
    if (folder.empty()) {
        folder = ".";
    }
    if (::access(path.c_str(), R_OK) != 0 ||
        (::access(path.c_str(), W_OK) == 0 && ::access(folder.c_str(), W_OK) == 0)) {
        return std::nullopt;
    }
    struct statvfs file_system {};
    if (::statvfs(folder.c_str(), &file_system) == 0 && (file_system.f_flag & ST_RDONLY) != 0) {
        return "the run store " + path + " is on a read-only file system";
    }
    return "the run store " + path + " (or its folder) cannot be written by this user";
}

}  // namespace

RunStore RunStore::open(const std::string& path) {
    check_database_path(path);
    create_parent_folder(path);
    try {
        // A new file is made by one process at a time: the ranks of a run each making it
        // beside the -wal and -shm of a database deleted alone (which this store keeps) raced
        // SQLite's switch to WAL, and one failed with "disk I/O error".
        std::optional<store::WriterLocks> making;
        if (makes_a_database(path)) {
            making.emplace(path);
            making->wait_to_make();
        }
        sqlite::Database database = sqlite::Database::open(path);
        configure_connection(database);
        // Everything before this line only reads: a file that is refused keeps every byte.
        store::refuse_unless_run_store(database);
        // Switching a new file to WAL is refused at once, without the busy wait, to a
        // connection that races another for it (a process of an older OOM Lab).
        store::retry_while_busy(kFinishTimeoutMs, [&] { use_wal(database); });
        const int version = store::migrate_schema(database);
        store::WriterLocks locks = making ? std::move(*making) : store::WriterLocks(path);
        locks.done_making();
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
        const int code = error.code();
        if (code == SQLITE_CANTOPEN || code == SQLITE_PERM || code == SQLITE_READONLY) {
            if (const auto why = why_not_writable(path)) {
                return open_read_only(
                    path, *why,
                    "copy it to a folder you may write to and open the copy (the copy is "
                    "changed, this file stays as it is)");
            }
        }
        if (auto bad_input = unusable_file(path, error)) {
            throw *bad_input;
        }
        if (store::disk_is_full(path)) {
            return open_read_only(path, "the disk holding the run store " + path + " is full",
                                  "free space on that disk (other files), then try again");
        }
        throw;
    }
}

RunStore RunStore::open_read_only(const std::string& path, const std::string& why,
                                  const std::string& what_to_do) {
    sqlite::Database database = sqlite::Database::open_immutable(path);
    store::refuse_unless_run_store(database);
    const int version = static_cast<int>(database.query_int("PRAGMA user_version"));
    if (version != store::latest_schema_version()) {
        throw BadInput(why + ", and the file was written by an older OOM Lab: it must be " +
                       "upgraded to be read by this version, which writes to it; " + what_to_do);
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
                                               why +
                                                   ": its runs can be read, not changed (none "
                                                   "trained into it, deleted, renamed or "
                                                   "tagged); " +
                                                   what_to_do});
    return RunStore(std::move(impl));
}

std::optional<std::int64_t> RunStore::fail_run_of_dead_writer(
    std::int64_t pid, std::chrono::system_clock::time_point since, const std::string& error) {
    sqlite::Database& database = m_impl->database;
    auto select = database.prepare(
        "SELECT id FROM runs WHERE status IN ('running', 'interrupted') AND owner_pid = ?1 "
        "AND owner_host = ?2 AND created_at >= ?3 ORDER BY id DESC LIMIT 1");
    select.bind_int(1, pid)
        .bind_text(2, store::current_process().host)
        .bind_text(3, store::iso8601_utc(since));
    if (!select.step()) {
        return std::nullopt;
    }
    const std::int64_t run_id = select.column_int(0);
    if (m_impl->locks.is_held(run_id) == true) {
        return std::nullopt;  // its writer lives: not the process that died
    }
    m_impl->with_room([&] { end_orphan(database, run_id, "failed", error); });
    return run_id;
}

std::string RunStore::default_path() {
    return user_data_dir() + "/runs.sqlite";
}

}  // namespace oomlab
