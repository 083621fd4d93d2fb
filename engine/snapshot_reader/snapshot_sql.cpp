#include "oomlab/snapshot_reader/snapshot_sql.h"

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>

#include "oomlab/common/errors.h"

namespace oomlab {
namespace {

// "OOMS" in the file's header: what is_snapshot_database reads back.
constexpr std::int32_t kApplicationId = 0x4F4F4D53;

// Tables first, rows next, indexes and views last: a bulk load into tables without indexes,
// each index then built once in order.
constexpr const char* kSchema = R"sql(
CREATE TABLE devices (
    device INTEGER PRIMARY KEY,  -- 0, 1, ... a GPU; -1 the CPU; -2 pinned host memory
    name TEXT, segments INTEGER, reserved INTEGER, allocated INTEGER,
    peak_allocated INTEGER,
    peak_event INTEGER,  -- the peak is the state after this many events
    reserved_at_peak INTEGER, peak_reserved INTEGER, peak_reserved_event INTEGER,
    events INTEGER,
    -- alive at the peak and named by no frame: allocated before the trace began (or, with
    -- no trace, while the history was off)
    before_trace_at_peak INTEGER);
CREATE TABLE stacks (
    device INTEGER, stack INTEGER,
    line TEXT,      -- the first frame outside torch, "train.py:41"; or why there is none
    kind TEXT,      -- forward, backward, optimizer step, copy or cast, other...
    metadata TEXT,  -- what the program set (torch.cuda.memory._set_memory_metadata)
    PRIMARY KEY (device, stack)) WITHOUT ROWID;
CREATE TABLE events (
    device INTEGER,
    event INTEGER,     -- its index in the device's trace, from 0
    action TEXT,       -- alloc, free, segment_alloc, segment_free, segment_map, segment_unmap
    address INTEGER, size INTEGER, stream INTEGER,
    stack INTEGER,     -- an allocation's, in stacks
    freed_at INTEGER); -- an allocation's: the event that frees it; NULL: alive at the end
CREATE TABLE held_from_start (device INTEGER, size INTEGER, stack INTEGER);
CREATE TABLE segments (
    device INTEGER, address INTEGER, size INTEGER, stream INTEGER,
    pool_owner INTEGER, pool_id INTEGER,  -- segment_pool_id; (0, 0) the default pool
    expandable INTEGER, small INTEGER);
CREATE TABLE blocks (device INTEGER, segment INTEGER, address INTEGER, size INTEGER,
                     allocated INTEGER);
CREATE TABLE ooms (device INTEGER, event INTEGER, requested INTEGER, device_free INTEGER,
                   allocated INTEGER);
CREATE TABLE stages (device INTEGER, stage TEXT, first_event INTEGER, end_event INTEGER);
)sql";

constexpr const char* kIndexesAndViews = R"sql(
CREATE INDEX events_by_event ON events (device, event);
CREATE VIEW allocations AS
    SELECT e.device, e.event, e.freed_at, e.address, e.size, e.stream,
           s.line, s.kind, s.metadata
    FROM events e LEFT JOIN stacks s ON s.device = e.device AND s.stack = e.stack
    WHERE e.action = 'alloc'
    UNION ALL
    SELECT h.device, -1, NULL, NULL, h.size, NULL, s.line, s.kind, s.metadata
    FROM held_from_start h LEFT JOIN stacks s ON s.device = h.device AND s.stack = h.stack;
CREATE VIEW at_peak AS
    SELECT a.* FROM allocations a JOIN devices d ON d.device = a.device
    WHERE a.event < d.peak_event AND (a.freed_at IS NULL OR a.freed_at >= d.peak_event)
    UNION ALL
    SELECT device, -1, NULL, NULL, before_trace_at_peak, NULL,
           CASE WHEN events = 0 THEN '(allocated while the history was off)'
                ELSE '(allocated before the trace began)' END, NULL, NULL
    FROM devices WHERE before_trace_at_peak > 0;
)sql";

const char* action_of(const SnapshotTraceChange& change) {
    using What = SnapshotTraceChange::What;
    switch (change.what) {
        case What::Alloc:
            return "alloc";
        case What::Free:
            return "free";
        case What::Reserve:
            return change.pages ? "segment_map" : "segment_alloc";
        case What::Release:
            return change.pages ? "segment_unmap" : "segment_free";
    }
    return "";
}

struct CloseDatabase {
    void operator()(sqlite3* db) const { sqlite3_close(db); }
};
struct FinalizeStatement {
    void operator()(sqlite3_stmt* statement) const { sqlite3_finalize(statement); }
};
using Database = std::unique_ptr<sqlite3, CloseDatabase>;
using Statement = std::unique_ptr<sqlite3_stmt, FinalizeStatement>;

Database open_database(const std::string& path, int flags) {
    sqlite3* db = nullptr;
    const int status = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
    Database owned(db);
    if (status != SQLITE_OK) {
        throw Error("cannot open " + path + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
    }
    return owned;
}

// Inserts rows of one table through one prepared statement.
class Inserter {
public:
    Inserter(sqlite3* db, const std::string& path, const char* sql) : m_db(db), m_path(path) {
        sqlite3_stmt* statement = nullptr;
        check(sqlite3_prepare_v2(db, sql, -1, &statement, nullptr));
        m_statement.reset(statement);
    }

    template <typename... Values>
    void row(const Values&... values) {
        int column = 0;
        (bind(++column, values), ...);
        if (sqlite3_step(m_statement.get()) != SQLITE_DONE) {
            check(sqlite3_errcode(m_db));
        }
        sqlite3_reset(m_statement.get());
    }

private:
    void bind(int column, std::int64_t value) {
        sqlite3_bind_int64(m_statement.get(), column, value);
    }
    void bind(int column, const std::string& value) {
        sqlite3_bind_text(m_statement.get(), column, value.data(), int(value.size()),
                          SQLITE_TRANSIENT);
    }
    // A literal of this file's, alive as long as the program: not copied (millions of rows).
    void bind(int column, const char* literal) {
        sqlite3_bind_text(m_statement.get(), column, literal, -1, SQLITE_STATIC);
    }
    void bind(int column, std::nullptr_t) { sqlite3_bind_null(m_statement.get(), column); }
    void check(int status) const {
        if (status != SQLITE_OK) {
            throw Error("cannot write " + m_path + ": " + sqlite3_errmsg(m_db));
        }
    }

    sqlite3* m_db;
    const std::string& m_path;
    Statement m_statement;
};

void execute(sqlite3* db, const std::string& path, const char* sql) {
    char* message = nullptr;
    if (sqlite3_exec(db, sql, nullptr, nullptr, &message) != SQLITE_OK) {
        const std::string why = message ? message : sqlite3_errmsg(db);
        sqlite3_free(message);
        throw Error("cannot write " + path + ": " + why);
    }
}

std::int64_t whole(std::size_t value) {
    return static_cast<std::int64_t>(value);
}

void write_device(sqlite3* db, const std::string& path, const SnapshotDevice& d) {
    // The replay's own figure for what the trace cannot name, so that at_peak adds up to the
    // peak as `snapshot show` finds it.
    std::int64_t before_trace = 0;
    for (const SnapshotLine& kind : d.at_peak_by_kind) {
        if (allocated_unrecorded(kind.where)) {
            before_trace = kind.bytes;
        }
    }
    Inserter(db, path, "INSERT INTO devices VALUES (?,?,?,?,?,?,?,?,?,?,?,?)")
        .row(std::int64_t(d.index), snapshot_device_name(d.index), d.segments, d.reserved,
             d.allocated, d.peak_allocated, whole(d.peak_event), d.reserved_at_peak,
             d.peak_reserved, whole(d.peak_reserved_event), whole(d.events), before_trace);
    const auto name = [&](std::uint32_t index) {
        return index < d.names.size() ? d.names[index] : std::string();
    };
    Inserter stacks(db, path, "INSERT INTO stacks VALUES (?,?,?,?,?)");
    for (std::size_t i = 0; i < d.stacks.size(); ++i) {
        const SnapshotStack& stack = d.stacks[i];
        stacks.row(std::int64_t(d.index), whole(i), name(stack.line), name(stack.kind),
                   name(stack.metadata));
    }
    Inserter events(db, path, "INSERT INTO events VALUES (?,?,?,?,?,?,?,?)");
    for (const SnapshotTraceChange& change : d.changes) {
        const bool alloc = change.what == SnapshotTraceChange::What::Alloc;
        const std::int64_t stream = change.stream < d.streams.size() ? d.streams[change.stream] : 0;
        const char* action = action_of(change);
        if (alloc && change.freed != SnapshotTraceChange::kNeverFreed) {
            events.row(std::int64_t(d.index), std::int64_t(change.event), action, change.address,
                       change.size, stream, std::int64_t(change.stack), std::int64_t(change.freed));
        } else if (alloc) {
            events.row(std::int64_t(d.index), std::int64_t(change.event), action, change.address,
                       change.size, stream, std::int64_t(change.stack), nullptr);
        } else {
            events.row(std::int64_t(d.index), std::int64_t(change.event), action, change.address,
                       change.size, stream, nullptr, nullptr);
        }
    }
    Inserter held(db, path, "INSERT INTO held_from_start VALUES (?,?,?)");
    for (const SnapshotHeldBlock& block : d.held_from_start) {
        held.row(std::int64_t(d.index), block.size, std::int64_t(block.stack));
    }
    Inserter segments(db, path, "INSERT INTO segments VALUES (?,?,?,?,?,?,?,?)");
    Inserter blocks(db, path, "INSERT INTO blocks VALUES (?,?,?,?,?)");
    for (const SnapshotSegmentLayout& segment : d.layout) {
        segments.row(std::int64_t(d.index), segment.address, segment.size, segment.stream,
                     segment.pool.first, segment.pool.second, std::int64_t(segment.expandable),
                     std::int64_t(segment.small));
        for (const SnapshotSegmentLayout::Block& block : segment.blocks) {
            blocks.row(std::int64_t(d.index), segment.address, block.address, block.size,
                       std::int64_t(block.allocated));
        }
    }
    Inserter ooms(db, path, "INSERT INTO ooms VALUES (?,?,?,?,?)");
    for (const SnapshotOom& oom : d.ooms) {
        ooms.row(std::int64_t(d.index), whole(oom.event), oom.requested, oom.device_free,
                 oom.allocated);
    }
    Inserter stages(db, path, "INSERT INTO stages VALUES (?,?,?,?)");
    for (const SnapshotStageSpan& span : d.stage_spans) {
        stages.row(std::int64_t(d.index),
                   span.stage < d.stages.size() ? d.stages[span.stage].name : std::string(),
                   whole(span.first), whole(span.end));
    }
}

}  // namespace

void write_snapshot_database(const SnapshotReport& report, const std::string& path) {
    // Written beside the target and renamed over it whole: a reader never sees half a load,
    // and a failure leaves what was there.
    const std::string temporary = path + ".tmp-" + std::to_string(getpid());
    std::remove(temporary.c_str());
    try {
        {
            const Database db =
                open_database(temporary, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
            // Nothing to recover from a half-written file but the snapshot itself.
            // A larger cache sorts the index in fewer passes: 8 bytes an event, at most 64 MiB,
            // which keeps it within what the report itself holds.
            std::size_t events = 0;
            for (const SnapshotDevice& device : report.devices) {
                events += device.changes.size();
            }
            const std::size_t cache_kib = std::clamp<std::size_t>(events * 8 / 1024, 2048, 65536);
            execute(db.get(), path,
                    ("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA cache_size = -" +
                     std::to_string(cache_kib) + ";")
                        .c_str());
            execute(db.get(), path,
                    ("PRAGMA application_id = " + std::to_string(kApplicationId)).c_str());
            execute(db.get(), path, kSchema);
            execute(db.get(), path, "BEGIN");
            for (const SnapshotDevice& device : report.devices) {
                write_device(db.get(), path, device);
            }
            execute(db.get(), path, "COMMIT");
            execute(db.get(), path, kIndexesAndViews);
        }
        if (std::rename(temporary.c_str(), path.c_str()) != 0) {
            throw Error("cannot write " + path + ": " + std::strerror(errno));
        }
    } catch (...) {
        std::remove(temporary.c_str());
        throw;
    }
}

bool is_snapshot_database(const std::string& path) {
    // The header SQLite writes: "SQLite format 3\0", the application id at byte 68, big-endian.
    std::ifstream in(path, std::ios::binary);
    char header[72] = {};
    if (!in.read(header, sizeof header) || std::memcmp(header, "SQLite format 3", 16) != 0) {
        return false;
    }
    const auto byte = [&](int i) { return std::uint32_t(static_cast<unsigned char>(header[i])); };
    return std::int32_t(byte(68) << 24 | byte(69) << 16 | byte(70) << 8 | byte(71)) ==
           kApplicationId;
}

void query_snapshot_database(const std::string& path, const std::string& query,
                             const std::function<void(const std::vector<std::string>&)>& row) {
    const Database db = open_database(path, SQLITE_OPEN_READONLY);
    sqlite3_stmt* prepared = nullptr;
    const char* rest = nullptr;
    if (sqlite3_prepare_v2(db.get(), query.c_str(), int(query.size()), &prepared, &rest) !=
        SQLITE_OK) {
        throw BadInput("QUERY: " + std::string(sqlite3_errmsg(db.get())));
    }
    const Statement statement(prepared);
    if (!statement) {
        throw BadInput("QUERY: no statement; e.g. SELECT * FROM at_peak ORDER BY size DESC");
    }
    if (std::string(rest).find_first_not_of(" \t\r\n;") != std::string::npos) {
        throw BadInput("QUERY: one statement at a time (more follows its first ';')");
    }
    if (!sqlite3_stmt_readonly(prepared)) {
        throw BadInput("QUERY: only reads: the database is the snapshot's, not to be changed");
    }
    const int columns = sqlite3_column_count(prepared);
    std::vector<std::string> values;
    for (int column = 0; column < columns; ++column) {
        values.emplace_back(sqlite3_column_name(prepared, column));
    }
    row(values);
    int status = SQLITE_ROW;
    while ((status = sqlite3_step(prepared)) == SQLITE_ROW) {
        for (int column = 0; column < columns; ++column) {
            const auto* text = sqlite3_column_text(prepared, column);
            values[std::size_t(column)] = text ? reinterpret_cast<const char*>(text) : "";
        }
        row(values);
    }
    if (status != SQLITE_DONE) {
        throw BadInput("QUERY: " + std::string(sqlite3_errmsg(db.get())));
    }
}

}  // namespace oomlab
