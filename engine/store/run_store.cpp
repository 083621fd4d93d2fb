// Opening a run store and everything that writes to it.
#include "oomlab/store/run_store.h"

#include <sqlite3.h>

#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include "oomlab/common/paths.h"
#include "store/process_owner.h"
#include "store/run_store_impl.h"
#include "store/schema.h"
#include "store/timestamp.h"

namespace oomlab {
namespace {

// Long enough to outlast the CLI's metric transactions, short enough that a stuck writer
// is reported instead of freezing the GUI.
constexpr int kBusyTimeoutMs = 5000;

constexpr const char* kInsertMetric =
    "INSERT INTO metrics (run_id, step, phase, wall_ms, loss, accuracy, allocated_bytes, "
    "reserved_bytes, peak_bytes, device_used_bytes, samples_per_s, rank, device_total_bytes, "
    "alloc_retries, oom_count) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)";

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

void configure_connection(sqlite::Database& database) {
    database.set_busy_timeout_ms(kBusyTimeoutMs);
    database.exec("PRAGMA foreign_keys = ON");  // per connection; ON DELETE CASCADE needs it
    // WAL lets readers (the GUI) work while a writer (the CLI) appends. The mode is stored in
    // the file, so only the first open has to switch it.
    if (database.query_text("PRAGMA journal_mode") != "wal") {
        database.query_text("PRAGMA journal_mode = WAL");
    }
    // In WAL mode NORMAL never corrupts the file; a power cut may only lose the last commits.
    database.exec("PRAGMA synchronous = NORMAL");
}

// Runs left `running` by a process that no longer exists will never finish.
void mark_interrupted_runs(sqlite::Database& database) {
    const store::ProcessOwner self = store::current_process();
    std::vector<std::pair<std::int64_t, store::ProcessOwner>> orphans;
    {
        auto select = database.prepare(
            "SELECT id, owner_host, owner_pid, owner_start_ticks FROM runs "
            "WHERE status = 'running'");
        while (select.step()) {
            store::ProcessOwner owner{select.column_text(1), select.column_int(2),
                                      select.column_int(3)};
            if (store::owner_is_gone(owner, self)) {
                orphans.emplace_back(select.column_int(0), std::move(owner));
            }
        }
    }
    if (orphans.empty()) {
        return;  // the usual case: no write lock taken
    }
    try {
        sqlite::Transaction transaction(database);
        auto update = database.prepare(
            "UPDATE runs SET status = 'interrupted', finished_at = ?1, error = ?2 "
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
        // Another process held the write lock past the busy timeout. Marking can wait for
        // the next open; refusing to open for it would not help anyone.
        if (error.code() != SQLITE_BUSY) {
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

std::string breakdown_column(std::size_t index) {
    return "breakdown_" + std::string(kBreakdownKeys.at(index));
}

void throw_no_such_run(const std::string& path, std::int64_t run_id) {
    throw Error("run store " + path + ": no run with id " + std::to_string(run_id));
}

}  // namespace store

RunStore::RunStore(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
RunStore::~RunStore() = default;
RunStore::RunStore(RunStore&&) noexcept = default;
RunStore& RunStore::operator=(RunStore&&) noexcept = default;

RunStore RunStore::open(const std::string& path) {
    create_parent_folder(path);
    try {
        sqlite::Database database = sqlite::Database::open(path);
        configure_connection(database);
        const int version = store::migrate_schema(database);
        mark_interrupted_runs(database);
        sqlite::Statement insert_metric = database.prepare(kInsertMetric);
        return RunStore(std::unique_ptr<Impl>(
            new Impl{std::move(database), version, std::move(insert_metric)}));
    } catch (const sqlite::SqliteError& error) {
        if (auto bad_input = unusable_file(path, error)) {
            throw *bad_input;
        }
        throw;
    }
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
    const store::ProcessOwner owner = store::current_process();
    auto insert = m_impl->database.prepare(
        "INSERT INTO runs (name, status, config_json, created_at, device, engine_version, "
        "torch_version, owner_host, owner_pid, owner_start_ticks, world_size) "
        "VALUES (?1, 'running', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
    insert.bind_text(1, run.name)
        .bind_text(2, run.config_json)
        .bind_text(3, store::utc_now())
        .bind_text(4, run.device)
        .bind_text(5, run.engine_version)
        .bind_text(6, run.torch_version)
        .bind_text(7, owner.host)
        .bind_int(8, owner.pid)
        .bind_int(9, owner.start_ticks)
        .bind_int(10, run.world_size)
        .run();
    return m_impl->database.last_insert_id();
}

void RunStore::append_metrics(std::int64_t run_id, const std::vector<MetricRow>& rows) {
    if (rows.empty()) {
        return;
    }
    sqlite::Transaction transaction(m_impl->database);
    sqlite::Statement& insert = m_impl->insert_metric;
    for (const MetricRow& row : rows) {
        insert.bind_int(1, run_id)
            .bind_int(2, row.step)
            .bind_text(3, row.phase)
            .bind_real(4, row.wall_ms)
            .bind_optional(5, row.loss)
            .bind_optional(6, row.accuracy)
            .bind_optional(7, row.allocated_bytes)
            .bind_optional(8, row.reserved_bytes)
            .bind_optional(9, row.peak_bytes)
            .bind_optional(10, row.device_used_bytes)
            .bind_optional(11, row.samples_per_s)
            .bind_int(12, row.rank)
            .bind_optional(13, row.device_total_bytes)
            .bind_optional(14, row.alloc_retries)
            .bind_optional(15, row.oom_count)
            .run();
    }
    transaction.commit();
}

void RunStore::add_event(std::int64_t run_id, const EventRow& event) {
    auto insert = m_impl->database.prepare(
        "INSERT INTO events (run_id, step, kind, message, created_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5)");
    insert.bind_int(1, run_id)
        .bind_int(2, event.step)
        .bind_text(3, event.kind)
        .bind_text(4, event.message)
        .bind_text(5, store::utc_now())
        .run();
}

void RunStore::finish_run(std::int64_t run_id, const RunOutcome& outcome) {
    std::string sql =
        "UPDATE runs SET status = ?1, error = ?2, finished_at = ?3, steps = ?4, "
        "final_train_loss = ?5, val_accuracy = ?6, peak_bytes = ?7, wall_seconds = ?8";
    constexpr int kFirstBreakdownParameter = 9;
    for (std::size_t i = 0; i < kBreakdownKeys.size(); ++i) {
        sql += ", " + store::breakdown_column(i) + " = ?" +
               std::to_string(kFirstBreakdownParameter + static_cast<int>(i));
    }
    const int id_parameter = kFirstBreakdownParameter + static_cast<int>(kBreakdownKeys.size());
    sql += " WHERE id = ?" + std::to_string(id_parameter);

    auto update = m_impl->database.prepare(sql);
    update.bind_text(1, run_status_name(outcome.status))
        .bind_text(2, outcome.error)
        .bind_text(3, store::utc_now())
        .bind_int(4, outcome.steps)
        .bind_optional(5, outcome.final_train_loss)
        .bind_optional(6, outcome.val_accuracy)
        .bind_int(7, outcome.peak_bytes)
        .bind_real(8, outcome.wall_seconds);
    for (std::size_t i = 0; i < kBreakdownKeys.size(); ++i) {
        update.bind_int(kFirstBreakdownParameter + static_cast<int>(i),
                        breakdown_field(outcome.breakdown, i));
    }
    update.bind_int(id_parameter, run_id).run();
    if (m_impl->database.changes() == 0) {
        store::throw_no_such_run(path(), run_id);
    }
}

bool RunStore::delete_run(std::int64_t run_id) {
    // Metrics and events go with it (ON DELETE CASCADE).
    m_impl->database.prepare("DELETE FROM runs WHERE id = ?1").bind_int(1, run_id).run();
    return m_impl->database.changes() > 0;
}

void RunStore::rename_run(std::int64_t run_id, const std::string& name) {
    m_impl->database.prepare("UPDATE runs SET name = ?1 WHERE id = ?2")
        .bind_text(1, name)
        .bind_int(2, run_id)
        .run();
    if (m_impl->database.changes() == 0) {
        store::throw_no_such_run(path(), run_id);
    }
}

void RunStore::set_notes(std::int64_t run_id, const std::string& notes) {
    m_impl->database.prepare("UPDATE runs SET notes = ?1 WHERE id = ?2")
        .bind_text(1, notes)
        .bind_int(2, run_id)
        .run();
    if (m_impl->database.changes() == 0) {
        store::throw_no_such_run(path(), run_id);
    }
}

}  // namespace oomlab
