// A snapshot as an SQLite database, for the questions no report answers ("what was alive at
// event N", "what did this line allocate, and when was it freed"): its devices, every event of
// their traces, the stacks those name, the segments and blocks at the end and the stages the
// program annotated, with views of the allocations and of what was alive at each device's
// peak. docs/snapshots.md lists the tables and their columns.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "oomlab/snapshot_reader/snapshot_report.h"

namespace oomlab {

// Writes `report` to a new database at `path` (replacing a file there), whole or not at all.
// Throws Error naming the path when it cannot be written.
void write_snapshot_database(const SnapshotReport& report, const std::string& path);

// Whether `path` is a database write_snapshot_database wrote (its application id).
bool is_snapshot_database(const std::string& path);

// Runs `query`, one statement that only reads, on the database at `path`: `row` is called with
// the column names, then with each row's values as text (NULL as ""). BadInput naming the query
// when it does not compile, writes, or is more than one statement.
void query_snapshot_database(const std::string& path, const std::string& query,
                             const std::function<void(const std::vector<std::string>&)>& row);

}  // namespace oomlab
