#include "sqlite.h"

#include <sqlite3.h>

#include <cstdio>
#include <utility>

namespace oomlab::sqlite {
namespace {

[[noreturn]] void throw_error(sqlite3* handle, const std::string& path, int code,
                              const std::string& what) {
    if ((code & 0xff) == SQLITE_FULL) {
        // What the user must do, not the statement that could not be written.
        // Nothing the run store itself offers helps: deleting runs needs room on the disk too.
        throw SqliteError("the disk holding the run store " + path +
                              " is full; free space on it and try again (the runs in it are "
                              "kept and can still be read)",
                          SQLITE_FULL);
    }
    if ((code & 0xff) == SQLITE_READONLY) {
        throw SqliteError("the run store " + path +
                              " cannot be written: it is read-only (the file, its folder or its "
                              "file system); reading it works (runs list, show, export), or use "
                              "--db with a file you may write",
                          SQLITE_READONLY);
    }
    std::string detail = handle ? sqlite3_errmsg(handle) : sqlite3_errstr(code);
    throw SqliteError("run store " + path + ": " + what + ": " + detail, code & 0xff);
}

}  // namespace

// --- Statement ---------------------------------------------------------------------------

Statement::~Statement() {
    sqlite3_finalize(m_statement);
}

Statement::Statement(Statement&& other) noexcept
    : m_statement(std::exchange(other.m_statement, nullptr)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
    if (this != &other) {
        sqlite3_finalize(m_statement);
        m_statement = std::exchange(other.m_statement, nullptr);
    }
    return *this;
}

void Statement::fail(int code, const char* what) const {
    sqlite3* handle = sqlite3_db_handle(m_statement);
    const char* file = sqlite3_db_filename(handle, "main");
    throw_error(handle, file ? file : "", code,
                std::string(what) + " (" + sqlite3_sql(m_statement) + ")");
}

Statement& Statement::bind_int(int index, std::int64_t value) {
    if (int rc = sqlite3_bind_int64(m_statement, index, value); rc != SQLITE_OK) {
        fail(rc, "bind");
    }
    return *this;
}

Statement& Statement::bind_real(int index, double value) {
    if (int rc = sqlite3_bind_double(m_statement, index, value); rc != SQLITE_OK) {
        fail(rc, "bind");
    }
    return *this;
}

Statement& Statement::bind_text(int index, std::string_view value) {
    int rc = sqlite3_bind_text64(m_statement, index, value.data(), value.size(), SQLITE_TRANSIENT,
                                 SQLITE_UTF8);
    if (rc != SQLITE_OK) {
        fail(rc, "bind");
    }
    return *this;
}

Statement& Statement::bind_null(int index) {
    if (int rc = sqlite3_bind_null(m_statement, index); rc != SQLITE_OK) {
        fail(rc, "bind");
    }
    return *this;
}

Statement& Statement::bind_optional(int index, const std::optional<std::int64_t>& value) {
    return value ? bind_int(index, *value) : bind_null(index);
}

Statement& Statement::bind_optional(int index, const std::optional<double>& value) {
    return value ? bind_real(index, *value) : bind_null(index);
}

bool Statement::step() {
    const int rc = sqlite3_step(m_statement);
    if (rc == SQLITE_ROW) {
        return true;
    }
    if (rc == SQLITE_DONE) {
        return false;
    }
    fail(rc, "step");
}

void Statement::run() {
    const int rc = sqlite3_step(m_statement);
    sqlite3_reset(m_statement);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        fail(rc, "run");
    }
}

void Statement::reset() {
    sqlite3_reset(m_statement);
}

bool Statement::column_is_null(int column) const {
    return sqlite3_column_type(m_statement, column) == SQLITE_NULL;
}

std::int64_t Statement::column_int(int column) const {
    return sqlite3_column_int64(m_statement, column);
}

double Statement::column_real(int column) const {
    return sqlite3_column_double(m_statement, column);
}

std::string Statement::column_text(int column) const {
    const auto* text = sqlite3_column_text(m_statement, column);
    const int size = sqlite3_column_bytes(m_statement, column);
    return text ? std::string(reinterpret_cast<const char*>(text), static_cast<std::size_t>(size))
                : std::string();
}

std::optional<std::int64_t> Statement::column_optional_int(int column) const {
    if (column_is_null(column)) {
        return std::nullopt;
    }
    return column_int(column);
}

std::optional<double> Statement::column_optional_real(int column) const {
    if (column_is_null(column)) {
        return std::nullopt;
    }
    return column_real(column);
}

// --- Database ----------------------------------------------------------------------------

namespace {

// Opens `name` (a path, or a URI with SQLITE_OPEN_URI) as the database at `path`.
sqlite3* open_handle(const std::string& name, int flags, const std::string& path) {
    sqlite3* handle = nullptr;
    const int rc = sqlite3_open_v2(name.c_str(), &handle, flags | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
        // The handle (if any) must be closed even on failure; read its message first.
        std::string detail = handle ? sqlite3_errmsg(handle) : sqlite3_errstr(rc);
        sqlite3_close(handle);
        throw SqliteError("run store " + path + ": cannot open: " + detail, rc & 0xff);
    }
    sqlite3_extended_result_codes(handle, 1);
    return handle;
}

}  // namespace

Database Database::open(const std::string& path) {
    return Database(open_handle(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, path), path);
}

Database Database::open_immutable(const std::string& path) {
    // As a URI: the characters a URI gives a meaning to are escaped in the path.
    std::string uri = "file:";
    for (const char c : path) {
        if (c == '%' || c == '?' || c == '#') {
            char escaped[4];
            std::snprintf(escaped, sizeof escaped, "%%%02X", static_cast<unsigned char>(c));
            uri += escaped;
        } else {
            uri += c;
        }
    }
    return Database(open_handle(uri + "?immutable=1", SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, path),
                    path);
}

Database::~Database() {
    close();
}

Database::Database(Database&& other) noexcept
    : m_handle(std::exchange(other.m_handle, nullptr)), m_path(std::move(other.m_path)) {}

Database& Database::operator=(Database&& other) noexcept {
    if (this != &other) {
        close();
        m_handle = std::exchange(other.m_handle, nullptr);
        m_path = std::move(other.m_path);
    }
    return *this;
}

void Database::close() noexcept {
    // sqlite3_close_v2 defers the close until any statement still alive is finalized.
    sqlite3_close_v2(m_handle);
    m_handle = nullptr;
}

void Database::fail(int code, const std::string& what) const {
    throw_error(m_handle, m_path, code, what);
}

void Database::exec(const std::string& sql) {
    if (int rc = sqlite3_exec(m_handle, sql.c_str(), nullptr, nullptr, nullptr); rc != SQLITE_OK) {
        fail(rc, "cannot run SQL");
    }
}

Statement Database::prepare(std::string_view sql) const {
    sqlite3_stmt* statement = nullptr;
    const int rc =
        sqlite3_prepare_v2(m_handle, sql.data(), static_cast<int>(sql.size()), &statement, nullptr);
    if (rc != SQLITE_OK) {
        fail(rc, "cannot prepare \"" + std::string(sql) + "\"");
    }
    return Statement(statement);
}

std::int64_t Database::query_int(std::string_view sql) const {
    Statement statement = prepare(sql);
    return statement.step() ? statement.column_int(0) : 0;
}

std::string Database::query_text(std::string_view sql) const {
    Statement statement = prepare(sql);
    return statement.step() ? statement.column_text(0) : std::string();
}

void Database::set_busy_timeout_ms(int milliseconds) {
    sqlite3_busy_timeout(m_handle, milliseconds);
}

void Database::persist_wal() {
    int keep = 1;
    sqlite3_file_control(m_handle, "main", SQLITE_FCNTL_PERSIST_WAL, &keep);
}

std::int64_t Database::last_insert_id() const {
    return sqlite3_last_insert_rowid(m_handle);
}

std::int64_t Database::changes() const {
    return sqlite3_changes64(m_handle);
}

bool Database::in_transaction() const {
    return sqlite3_get_autocommit(m_handle) == 0;
}

// --- Transaction -------------------------------------------------------------------------

Transaction::Transaction(Database& database)
    : m_database(database), m_nested(database.in_transaction()) {
    m_database.exec(m_nested ? "SAVEPOINT nested" : "BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
    if (m_open) {
        try {
            m_database.exec(m_nested ? "ROLLBACK TO nested; RELEASE nested" : "ROLLBACK");
        } catch (const SqliteError&) {
            // SQLite already rolled back on its own (e.g. after SQLITE_FULL); nothing to undo.
        }
    }
}

void Transaction::commit() {
    m_database.exec(m_nested ? "RELEASE nested" : "COMMIT");
    m_open = false;
}

}  // namespace oomlab::sqlite
