// RunStore's private state, shared by the files that implement it (writes in
// run_store.cpp, reads in run_queries.cpp).
#pragma once

#include <cstddef>
#include <string>

#include "oomlab/store/run_store.h"
#include "store/sqlite.h"

namespace oomlab {

struct RunStore::Impl {
    sqlite::Database database;
    int schema_version = 0;
    sqlite::Statement insert_metric;  // prepared once: append_metrics runs it for every row
};

namespace store {

// The runs column holding kBreakdownKeys[index]: "breakdown_<key>".
std::string breakdown_column(std::size_t index);

[[noreturn]] void throw_no_such_run(const std::string& path, std::int64_t run_id);

}  // namespace store
}  // namespace oomlab
