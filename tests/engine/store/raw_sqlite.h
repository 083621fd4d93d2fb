// Direct SQLite access for the store tests: building files by hand (old, newer or foreign
// schemas) and checking what the store wrote, independently of RunStore.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace oomlab::test {

class RawDatabase {
public:
    explicit RawDatabase(const std::string& path) {
        if (sqlite3_open(path.c_str(), &m_handle) != SQLITE_OK) {
            throw std::runtime_error("cannot open " + path);
        }
    }
    ~RawDatabase() { sqlite3_close_v2(m_handle); }
    RawDatabase(const RawDatabase&) = delete;
    RawDatabase& operator=(const RawDatabase&) = delete;

    void exec(const std::string& sql) {
        char* message = nullptr;
        if (sqlite3_exec(m_handle, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
            const std::string text = message ? message : "unknown error";
            sqlite3_free(message);
            throw std::runtime_error(sql + ": " + text);
        }
    }

    // The first column of the first row (0 / "" when there is no row).
    std::int64_t query_int(const std::string& sql) {
        Query query(m_handle, sql);
        return query.row ? sqlite3_column_int64(query.statement, 0) : 0;
    }

    std::string query_text(const std::string& sql) {
        Query query(m_handle, sql);
        const auto* text = query.row ? sqlite3_column_text(query.statement, 0) : nullptr;
        return text ? reinterpret_cast<const char*>(text) : "";
    }

    bool is_null(const std::string& sql) {
        Query query(m_handle, sql);
        return query.row && sqlite3_column_type(query.statement, 0) == SQLITE_NULL;
    }

private:
    struct Query {
        Query(sqlite3* handle, const std::string& sql) {
            if (sqlite3_prepare_v2(handle, sql.c_str(), -1, &statement, nullptr) != SQLITE_OK) {
                throw std::runtime_error(sql + ": " + sqlite3_errmsg(handle));
            }
            row = sqlite3_step(statement) == SQLITE_ROW;
        }
        ~Query() { sqlite3_finalize(statement); }
        sqlite3_stmt* statement = nullptr;
        bool row = false;
    };

    sqlite3* m_handle = nullptr;
};

}  // namespace oomlab::test
