// A table's columns, each declared once with the field of the row struct it holds: the SQL
// column lists and the binding and reading loops are made from the declaration, so a new
// column is one line here (and its migration in schema.cpp), not a position kept in step in
// three statements.
//
//   constexpr Column<MetricRow> kColumns[] = {column<&MetricRow::step>("step"), ...};
//   insert_sql("metrics", kColumns, "run_id") -> "INSERT INTO metrics (run_id, step, ...) ..."
//
// A field stored in another form (a status by its name) gives its own bind and read.
#pragma once

#include <cstdint>
#include <iterator>
#include <optional>
#include <string>

#include "sqlite.h"

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

// `Columns` below is any sequence of Column<Row>: a constexpr array or a vector built once.

// "a, b, c": the columns' names.
template <typename Columns>
std::string column_list(const Columns& columns) {
    std::string list;
    for (const auto& c : columns) {
        list += (list.empty() ? "" : ", ") + std::string(c.name);
    }
    return list;
}

// "?first, ?first+1, ...": one parameter for each column.
template <typename Columns>
std::string parameter_list(const Columns& columns, int first) {
    std::string list;
    for (std::size_t i = 0; i < std::size(columns); ++i) {
        list += (i == 0 ? "?" : ", ?") + std::to_string(first + static_cast<int>(i));
    }
    return list;
}

// "a = ?first, b = ?first+1": an UPDATE's assignments.
template <typename Columns>
std::string assignment_list(const Columns& columns, int first) {
    std::string list;
    int parameter = first;
    for (const auto& c : columns) {
        list +=
            (list.empty() ? "" : ", ") + std::string(c.name) + " = ?" + std::to_string(parameter++);
    }
    return list;
}

// "INSERT INTO table (key, a, b) VALUES (?1, ?2, ?3)": the key column (a run's id) first.
template <typename Columns>
std::string insert_sql(const std::string& table, const Columns& columns, const std::string& key) {
    return "INSERT INTO " + table + " (" + key + ", " + column_list(columns) + ") VALUES (?1, " +
           parameter_list(columns, 2) + ")";
}

// Binds `row` to the parameters from `first` on, in the columns' order.
template <typename Columns, typename Row>
void bind_row(sqlite::Statement& statement, const Columns& columns, const Row& row, int first) {
    int parameter = first;
    for (const Column<Row>& c : columns) {
        c.bind(statement, parameter++, row);
    }
}

// Reads `row` from the statement's result columns from `first` on, in the columns' order.
template <typename Columns, typename Row>
void read_row(const sqlite::Statement& statement, const Columns& columns, Row& row, int first) {
    int index = first;
    for (const Column<Row>& c : columns) {
        c.read(statement, index++, row);
    }
}

}  // namespace oomlab::store
