// A thin RAII layer over the SQLite C API: a connection, prepared statements with typed
// bind/column helpers, and a transaction guard. Every failure throws SqliteError naming
// the database file and carrying SQLite's result code.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "oomlab/common/errors.h"

struct sqlite3;
struct sqlite3_stmt;

namespace oomlab::sqlite {

class SqliteError : public Error {
public:
    SqliteError(const std::string& message, int code) : Error(message), m_code(code) {}
    int code() const { return m_code; }  // primary result code: SQLITE_BUSY, SQLITE_NOTADB, ...

private:
    int m_code;
};

// A prepared statement. Parameters are 1-based (as in SQL's ?1), columns 0-based (as in
// SQLite's C API).
class Statement {
public:
    Statement() = default;
    explicit Statement(sqlite3_stmt* statement) : m_statement(statement) {}
    ~Statement();
    Statement(Statement&& other) noexcept;
    Statement& operator=(Statement&& other) noexcept;
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    Statement& bind_int(int index, std::int64_t value);
    Statement& bind_real(int index, double value);
    Statement& bind_text(int index, std::string_view value);
    Statement& bind_null(int index);
    Statement& bind_optional(int index, const std::optional<std::int64_t>& value);
    Statement& bind_optional(int index, const std::optional<double>& value);

    // Advances to the next row: true when one is ready, false when the statement is done.
    bool step();
    // Runs a statement that returns no rows, then resets it so it can be bound again.
    void run();
    void reset();

    bool column_is_null(int column) const;
    std::int64_t column_int(int column) const;
    double column_real(int column) const;
    std::string column_text(int column) const;  // "" for NULL
    std::optional<std::int64_t> column_optional_int(int column) const;
    std::optional<double> column_optional_real(int column) const;

private:
    [[noreturn]] void fail(int code, const char* what) const;
    sqlite3_stmt* m_statement = nullptr;
};

// One connection. Not shared between threads: each thread opens its own.
class Database {
public:
    // Opens (creating if missing) a read-write database file.
    static Database open(const std::string& path);
    // Read-only, without locks or its -wal and -shm files: for a file no process can change
    // (its disk is full), which a normal open cannot even read (it must create them).
    static Database open_immutable(const std::string& path);
    ~Database();
    Database(Database&& other) noexcept;
    Database& operator=(Database&& other) noexcept;
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;

    const std::string& path() const { return m_path; }

    // Runs one or more statements that return no rows.
    void exec(const std::string& sql);
    Statement prepare(std::string_view sql) const;
    // The first column of the first row, e.g. of a PRAGMA.
    std::int64_t query_int(std::string_view sql) const;
    std::string query_text(std::string_view sql) const;

    void set_busy_timeout_ms(int milliseconds);
    // Keeps the -wal and -shm files after the last connection closes (SQLITE_FCNTL_PERSIST_WAL).
    void persist_wal();
    std::int64_t last_insert_id() const;
    std::int64_t changes() const;  // rows touched by the last INSERT/UPDATE/DELETE
    bool in_transaction() const;

    [[noreturn]] void fail(int code, const std::string& what) const;

private:
    Database(sqlite3* handle, std::string path) : m_handle(handle), m_path(std::move(path)) {}
    void close() noexcept;
    sqlite3* m_handle = nullptr;
    std::string m_path;
};

// BEGIN IMMEDIATE ... COMMIT, rolled back when left without commit(). Taking the write lock
// up front means the transaction never has to upgrade a read lock, which in WAL mode can
// fail at once with SQLITE_BUSY instead of waiting for the busy timeout. Inside another
// transaction, a savepoint: its writes are kept or undone with the outer transaction's.
class Transaction {
public:
    explicit Transaction(Database& database);
    ~Transaction();
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;

    void commit();

private:
    Database& m_database;
    bool m_nested;  // inside another: a savepoint, committed or undone with the outer one
    bool m_open = true;
};

}  // namespace oomlab::sqlite
