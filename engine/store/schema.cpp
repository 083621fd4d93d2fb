#include "schema.h"

#include <iterator>
#include <set>
#include <string>

namespace oomlab::store {
namespace {

// One step forward: the SQL that takes a file from `version - 1` to `version`. Steps are
// frozen once released; a schema change is a new entry at the end of kMigrations.
struct Migration {
    int version;
    const char* sql;
};

// Breakdown columns are named breakdown_<key> after kBreakdownKeys; owner_* identify the
// process writing a run so a later process can tell a live writer from a dead one.
constexpr const char* kInitialSchema = R"sql(
CREATE TABLE runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN
        ('running', 'completed', 'oom', 'failed', 'cancelled', 'interrupted')),
    config_json TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    finished_at TEXT,
    device TEXT NOT NULL DEFAULT '',
    engine_version TEXT NOT NULL DEFAULT '',
    torch_version TEXT NOT NULL DEFAULT '',
    error TEXT NOT NULL DEFAULT '',
    notes TEXT NOT NULL DEFAULT '',
    steps INTEGER NOT NULL DEFAULT 0,
    final_train_loss REAL,
    val_accuracy REAL,
    peak_bytes INTEGER NOT NULL DEFAULT 0,
    wall_seconds REAL NOT NULL DEFAULT 0,
    breakdown_embedding_table INTEGER NOT NULL DEFAULT 0,
    breakdown_parameters INTEGER NOT NULL DEFAULT 0,
    breakdown_gradients INTEGER NOT NULL DEFAULT 0,
    breakdown_optimizer_state INTEGER NOT NULL DEFAULT 0,
    breakdown_data INTEGER NOT NULL DEFAULT 0,
    breakdown_activations INTEGER NOT NULL DEFAULT 0,
    breakdown_allocator_cache INTEGER NOT NULL DEFAULT 0,
    breakdown_other INTEGER NOT NULL DEFAULT 0,
    owner_host TEXT NOT NULL DEFAULT '',
    owner_pid INTEGER NOT NULL DEFAULT 0,
    owner_start_ticks INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX runs_by_status ON runs (status);

CREATE TABLE metrics (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    step INTEGER NOT NULL,
    phase TEXT NOT NULL,
    wall_ms REAL NOT NULL,
    loss REAL,
    accuracy REAL,
    allocated_bytes INTEGER,
    reserved_bytes INTEGER,
    peak_bytes INTEGER,
    device_used_bytes INTEGER,
    samples_per_s REAL
);
CREATE INDEX metrics_by_run_step ON metrics (run_id, step);

CREATE TABLE events (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    step INTEGER NOT NULL,
    kind TEXT NOT NULL,
    message TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX events_by_run_step ON events (run_id, step);
)sql";

// Version 2: room for data-parallel runs (one process per rank, SPEC section 8): which rank
// wrote a metric, and how many ranks a run had. Existing rows are rank 0 of one.
constexpr const char* kRanks = R"sql(
ALTER TABLE metrics ADD COLUMN rank INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN world_size INTEGER NOT NULL DEFAULT 1;
)sql";

// Version 3: the CUDA caching allocator's counters and the device's size with each sample.
// Older rows have none (NULL), as CPU rows have no allocation retries.
constexpr const char* kAllocatorCounters = R"sql(
ALTER TABLE metrics ADD COLUMN device_total_bytes INTEGER;
ALTER TABLE metrics ADD COLUMN alloc_retries INTEGER;
ALTER TABLE metrics ADD COLUMN oom_count INTEGER;
)sql";

// Version 4: the micro-batch and accumulation a run ended with (on_oom=halve or adapt change
// them; older runs have none: 0), and tags to find runs by.
constexpr const char* kFinalBatch = R"sql(
ALTER TABLE runs ADD COLUMN final_batch_size INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN final_accumulation INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN tags TEXT NOT NULL DEFAULT '';
)sql";

// Version 5: where the bytes come from. Per module of the model at the peak (phase 'peak')
// and at phase boundaries of sampled steps; the staircase of a run's stages; the allocator's
// free space at an OOM (NULL where the allocator keeps no blocks, as on the CPU).
constexpr const char* kMemoryDetails = R"sql(
CREATE TABLE module_memory (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    rank INTEGER NOT NULL DEFAULT 0,
    step INTEGER NOT NULL,
    phase TEXT NOT NULL,
    position INTEGER NOT NULL,
    module TEXT NOT NULL,
    parameters INTEGER NOT NULL DEFAULT 0,
    gradients INTEGER NOT NULL DEFAULT 0,
    optimizer_state INTEGER NOT NULL DEFAULT 0,
    activations INTEGER
);
CREATE INDEX module_memory_by_run ON module_memory (run_id, phase);

CREATE TABLE memory_stages (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    rank INTEGER NOT NULL DEFAULT 0,
    position INTEGER NOT NULL,
    stage TEXT NOT NULL,
    allocated_bytes INTEGER NOT NULL,
    device_used_bytes INTEGER
);
CREATE INDEX memory_stages_by_run ON memory_stages (run_id);

ALTER TABLE runs ADD COLUMN oom_requested_bytes INTEGER;
ALTER TABLE runs ADD COLUMN oom_reserved_free_bytes INTEGER;
ALTER TABLE runs ADD COLUMN oom_largest_free_block INTEGER;
ALTER TABLE runs ADD COLUMN oom_free_blocks INTEGER;
ALTER TABLE runs ADD COLUMN oom_unreserved_free_bytes INTEGER;
)sql";

// Version 6: how each rank of a run ended, with its own run peak (the allocator's, evaluation
// included; older runs have only their ranks' step rows to show a peak).
constexpr const char* kRankOutcomes = R"sql(
CREATE TABLE rank_outcomes (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    rank INTEGER NOT NULL,
    status TEXT NOT NULL,
    steps INTEGER NOT NULL DEFAULT 0,
    peak_bytes INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, rank)
);
)sql";

// Version 7: each run's identity, unique across every database, by which the other ranks of
// a data-parallel run join the run rank 0 created (never a run that only shares its number).
constexpr const char* kRunIdentity = R"sql(
ALTER TABLE runs ADD COLUMN uid TEXT;
CREATE UNIQUE INDEX runs_by_uid ON runs (uid);
)sql";

// Version 8: what the estimator predicted for the run when it started (prediction_json of
// oomlab/run/prediction_check.h), so a run is shown beside its prediction.
constexpr const char* kPrediction = R"sql(
ALTER TABLE runs ADD COLUMN prediction_json TEXT;
)sql";

// Version 9: the fixes offered when the run ran out of memory (oom_fixes_json), and the run
// whose out-of-memory a run tried to fix, so each fix can be followed to what it measured.
constexpr const char* kFixes = R"sql(
ALTER TABLE runs ADD COLUMN fixes_json TEXT;
ALTER TABLE runs ADD COLUMN fix_of INTEGER REFERENCES runs (id) ON DELETE SET NULL;
)sql";

// Version 10: what a tracker gets with the run besides its figures (a lesson run's lesson and
// the student's prediction: tracker_tags_json of oomlab/run/run_json.h), so that a run sent
// again later carries them.
constexpr const char* kTrackerTags = R"sql(
ALTER TABLE runs ADD COLUMN tracker_tags_json TEXT;
)sql";

constexpr Migration kMigrations[] = {
    {1, kInitialSchema}, {2, kRanks},        {3, kAllocatorCounters}, {4, kFinalBatch},
    {5, kMemoryDetails}, {6, kRankOutcomes}, {7, kRunIdentity},       {8, kPrediction},
    {9, kFixes},         {10, kTrackerTags},
};

int user_version(const sqlite::Database& database) {
    return static_cast<int>(database.query_int("PRAGMA user_version"));
}

void refuse_newer(const sqlite::Database& database, int version) {
    if (version > latest_schema_version()) {
        throw BadInput(database.path() + ": written by a newer OOM Lab (schema version " +
                       std::to_string(version) + ", this build knows up to " +
                       std::to_string(latest_schema_version()) +
                       "); open it with a newer OOM Lab or choose another database file");
    }
}

// Written into every run store's header ("OOML"), so another program's file is told apart.
constexpr std::int64_t kApplicationId = 0x4F4F4D4C;

[[noreturn]] void refuse_foreign(const sqlite::Database& database) {
    throw BadInput(database.path() +
                   ": an SQLite database of another program, not an OOM Lab run store; "
                   "choose another database file");
}

// A store of any schema version has its runs table with config_json (stores made before the
// application id was written have only this to show).
bool has_run_tables(const sqlite::Database& database) {
    return database.query_int(
               "SELECT count(*) FROM pragma_table_info('runs') "
               "WHERE name = 'config_json'") == 1 &&
           database.query_int(
               "SELECT count(*) FROM sqlite_master "
               "WHERE type = 'table' AND name IN ('metrics', 'events')") == 2;
}

[[noreturn]] void refuse_damaged(const sqlite::Database& database, const std::string& what) {
    throw BadInput(database.path() + ": a damaged OOM Lab database: " + what +
                   ". Nothing was changed; restore the file from a backup, or choose another "
                   "database file");
}

// Each "table.column" of `database`'s tables.
std::set<std::string> columns_of(const sqlite::Database& database) {
    std::set<std::string> columns;
    auto select = database.prepare(
        "SELECT m.name || '.' || c.name FROM sqlite_master AS m, pragma_table_info(m.name) AS c "
        "WHERE m.type = 'table'");
    while (select.step()) {
        columns.insert(select.column_text(0));
    }
    return columns;
}

std::string table_of(const std::string& column) {
    return column.substr(0, column.find('.'));
}

// The columns of a store of schema `version`, as its migrations make them in memory.
std::set<std::string> columns_of_schema(int version) {
    sqlite::Database reference = sqlite::Database::open(":memory:");
    for (const Migration& migration : kMigrations) {
        if (migration.version <= version) {
            reference.exec(migration.sql);
        }
    }
    return columns_of(reference);
}

// Made once per process: every up-to-date file is compared with it.
const std::set<std::string>& columns_of_latest_schema() {
    static const std::set<std::string> columns = columns_of_schema(latest_schema_version());
    return columns;
}

// A file of schema `version` has every column its migrations made, and none of a later one
// (its version was set back: the next migration would fail half way).
void refuse_unlike_its_version(const sqlite::Database& database, int version) {
    const std::set<std::string> present = columns_of(database);
    std::set<std::string> present_tables;
    for (const std::string& column : present) {
        present_tables.insert(table_of(column));
    }
    const std::set<std::string>& latest = columns_of_latest_schema();
    const std::set<std::string> expected =
        version == latest_schema_version() ? latest : columns_of_schema(version);
    const std::string schema = " (schema version " + std::to_string(version) + ")";
    for (const std::string& column : expected) {
        const std::string table = table_of(column);
        if (present_tables.count(table) == 0) {
            refuse_damaged(database, "table " + table + " is missing" + schema);
        }
        if (present.count(column) == 0) {
            refuse_damaged(database, "table " + table + " has no column " +
                                         column.substr(table.size() + 1) + schema);
        }
    }
    for (const std::string& column : latest) {
        if (expected.count(column) == 0 && present.count(column) != 0) {
            refuse_damaged(database, "its schema version is " + std::to_string(version) +
                                         " (PRAGMA user_version), but it has " + column +
                                         " of a later version");
        }
    }
}

// What decides whether a file is a store, read in one statement (one snapshot: another
// process may be creating the schema meanwhile).
struct StoreHeader {
    std::int64_t application_id = 0;
    int version = 0;
    bool empty = true;
};

StoreHeader read_header(const sqlite::Database& database) {
    auto select = database.prepare(
        "SELECT (SELECT application_id FROM pragma_application_id), "
        "(SELECT user_version FROM pragma_user_version), (SELECT count(*) FROM sqlite_master)");
    select.step();
    return {select.column_int(0), static_cast<int>(select.column_int(1)),
            select.column_int(2) == 0};
}

}  // namespace

void refuse_unless_run_store(const sqlite::Database& database) {
    const auto [application_id, version, empty] = read_header(database);
    if (application_id != 0 && application_id != kApplicationId) {
        refuse_foreign(database);
    }
    if (version <= 0 && !empty) {
        // Every store records its version with its first table: a file with tables and no
        // version is ours only when it says so, and then its version was lost.
        if (application_id != kApplicationId) {
            refuse_foreign(database);
        }
        refuse_damaged(database, "its schema version is " + std::to_string(version) +
                                     " (PRAGMA user_version), though it has tables");
    }
    const bool ours = application_id == kApplicationId || empty || has_run_tables(database) ||
                      // A newer schema may have changed the tables; its runs table is still there.
                      (version > latest_schema_version() &&
                       database.query_int("SELECT count(*) FROM sqlite_master "
                                          "WHERE type = 'table' AND name = 'runs'") == 1);
    if (!ours) {
        refuse_foreign(database);
    }
    refuse_newer(database, version);
    if (version > 0) {
        refuse_unlike_its_version(database, version);
    }
}

int latest_schema_version() {
    return std::prev(std::end(kMigrations))->version;
}

int migrate_schema(sqlite::Database& database) {
    // Look before taking the write lock: an up-to-date file (the usual case) opens even while
    // another process holds a long write transaction.
    int version = user_version(database);
    refuse_newer(database, version);
    if (version == latest_schema_version()) {
        return version;
    }

    sqlite::Transaction transaction(database);
    version = user_version(database);  // another process may have migrated meanwhile
    refuse_newer(database, version);
    if (version == 0 && database.query_int("SELECT count(*) FROM sqlite_master") > 0) {
        refuse_foreign(database);
    }
    database.exec("PRAGMA application_id = " + std::to_string(kApplicationId));
    for (const Migration& migration : kMigrations) {
        if (migration.version > version) {
            database.exec(migration.sql);
            database.exec("PRAGMA user_version = " + std::to_string(migration.version));
        }
    }
    transaction.commit();
    try {
        // The log of a migration is as large as the new schema; on a small disk the space it
        // keeps would be missing from the reserve that lets a run end on a full disk.
        database.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    } catch (const sqlite::SqliteError&) {
        // A reader holds the log: it is reused by the next writes.
    }
    return latest_schema_version();
}

}  // namespace oomlab::store
