// A table's columns, each declared once with the field of the row struct it holds: the SQL
// column lists and the binding and reading loops are made from the declaration, so a new
// column is one line here (and its migration in schema.cpp), not a position kept in step in
// three statements.
//
//   constexpr Column<MetricRow> kColumns[] = {column<&MetricRow::step>("step"), ...};
//   insert_sql("metrics", kColumns, "run_id") -> "INSERT INTO metrics (run_id, step, ...) ..."
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "store/sqlite.h"

namespace oomlab::store {

template <typename Row>
struct Column {
    const char* name;
    void (*bind)(sqlite::Statement& statement, int parameter, const Row& row);
    void (*read)(const sqlite::Statement& statement, int column, Row& row);
};

namespace columns_detail {

inline void bind(sqlite::Statement& s, int i, std::int64_t value) {
    s.bind_int(i, value);
}
inline void bind(sqlite::Statement& s, int i, int value) {
    s.bind_int(i, value);
}
inline void bind(sqlite::Statement& s, int i, double value) {
    s.bind_real(i, value);
}
inline void bind(sqlite::Statement& s, int i, const std::string& value) {
    s.bind_text(i, value);
}
inline void bind(sqlite::Statement& s, int i, const std::optional<std::int64_t>& value) {
    s.bind_optional(i, value);
}
inline void bind(sqlite::Statement& s, int i, const std::optional<double>& value) {
    s.bind_optional(i, value);
}

inline void read(const sqlite::Statement& s, int i, std::int64_t& value) {
    value = s.column_int(i);
}
inline void read(const sqlite::Statement& s, int i, int& value) {
    value = static_cast<int>(s.column_int(i));
}
inline void read(const sqlite::Statement& s, int i, double& value) {
    value = s.column_real(i);
}
inline void read(const sqlite::Statement& s, int i, std::string& value) {
    value = s.column_text(i);
}
inline void read(const sqlite::Statement& s, int i, std::optional<std::int64_t>& value) {
    value = s.column_optional_int(i);
}
inline void read(const sqlite::Statement& s, int i, std::optional<double>& value) {
    value = s.column_optional_real(i);
}

template <typename>
struct MemberOf;
template <typename R, typename T>
struct MemberOf<T R::*> {
    using Row = R;
};

}  // namespace columns_detail

// The column `name` holding the field `Member` (&Row::field) as it is.
template <auto Member>
constexpr Column<typename columns_detail::MemberOf<decltype(Member)>::Row> column(
    const char* name) {
    using Row = typename columns_detail::MemberOf<decltype(Member)>::Row;
    return {name,
            [](sqlite::Statement& statement, int parameter, const Row& row) {
                columns_detail::bind(statement, parameter, row.*Member);
            },
            [](const sqlite::Statement& statement, int index, Row& row) {
                columns_detail::read(statement, index, row.*Member);
            }};
}

// "a, b, c": the columns' names.
template <typename Row, std::size_t N>
std::string column_list(const Column<Row> (&columns)[N]) {
    std::string list;
    for (const Column<Row>& c : columns) {
        list += (list.empty() ? "" : ", ") + std::string(c.name);
    }
    return list;
}

// "INSERT INTO table (key, a, b) VALUES (?1, ?2, ?3)": the key column (a run's id) first.
template <typename Row, std::size_t N>
std::string insert_sql(const std::string& table, const Column<Row> (&columns)[N],
                       const std::string& key) {
    std::string values = "?1";
    for (std::size_t i = 0; i < N; ++i) {
        values += ", ?" + std::to_string(i + 2);
    }
    return "INSERT INTO " + table + " (" + key + ", " + column_list(columns) + ") VALUES (" +
           values + ")";
}

// Binds `row` after the key (parameters 2...), as insert_sql lists them.
template <typename Row, std::size_t N>
void bind_row(sqlite::Statement& statement, const Column<Row> (&columns)[N], const Row& row) {
    for (std::size_t i = 0; i < N; ++i) {
        columns[i].bind(statement, static_cast<int>(i) + 2, row);
    }
}

// Reads the columns from the first `N` of the statement's result, as column_list lists them.
template <typename Row, std::size_t N>
Row read_row(const sqlite::Statement& statement, const Column<Row> (&columns)[N]) {
    Row row;
    for (std::size_t i = 0; i < N; ++i) {
        columns[i].read(statement, static_cast<int>(i), row);
    }
    return row;
}

}  // namespace oomlab::store
