// The run store's schema: an ordered list of forward migrations, applied on open. The
// version a file has reached lives in PRAGMA user_version (0: a new, empty file).
#pragma once

#include "sqlite.h"

namespace oomlab::store {

int latest_schema_version();

// Brings the database to the latest schema in one write transaction and returns the
// version. Throws BadInput naming the file when it was written by a newer schema or is an
// SQLite database of some other program.
int migrate_schema(sqlite::Database& database);

// Throws BadInput naming the file unless it is empty or a run store this build can open (not
// another program's database, not a newer schema). Only reads: a refused file is unchanged.
void refuse_unless_run_store(const sqlite::Database& database);

}  // namespace oomlab::store
