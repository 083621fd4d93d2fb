// Everything that writes to a run store (opening it: run_store_open.cpp).
#include "oomlab/store/run_store.h"

#include <sqlite3.h>

#include <chrono>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "oomlab/common/errors.h"
#include "oomlab/common/utf8.h"
#include "oomlab/run/run_json.h"
#include "oomlab/store/timestamp.h"
#include "process_owner.h"
#include "run_identity.h"
#include "run_store_impl.h"

namespace oomlab {

using store::kBusyTimeoutMs;
using store::kFinishTimeoutMs;

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

sqlite::Statement RunStore::Impl::prepare_insert_event() {
    return database.prepare("INSERT INTO events (run_id, created_at, " +
                            store::column_list(store::kEventColumns) + ") VALUES (?1, ?2, " +
                            store::parameter_list(store::kEventColumns, 3) + ")");
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
            auto insert = prepare_insert_event();
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

void RunStore::set_fixes(std::int64_t run_id, const std::string& fixes_json) {
    m_impl->set_text(run_id, "fixes_json", fixes_json);
}

void RunStore::set_tracker_tags(std::int64_t run_id,
                                const std::map<std::string, std::string>& tags) {
    m_impl->set_text(run_id, "tracker_tags_json", tracker_tags_json(tags));
}

bool RunStore::set_fix_of(std::int64_t run_id, std::int64_t fixed_run) {
    m_impl->user_write([&] {
        m_impl->database
            .prepare(
                "UPDATE runs SET fix_of = ?1 WHERE id = ?2 AND EXISTS "
                "(SELECT 1 FROM runs WHERE id = ?1)")
            .bind_int(1, fixed_run)
            .bind_int(2, run_id)
            .run();
    });
    if (m_impl->database.changes() > 0) {
        return true;
    }
    if (!find_run(run_id)) {
        store::throw_no_such_run(path(), run_id);
    }
    return false;
}

}  // namespace oomlab
