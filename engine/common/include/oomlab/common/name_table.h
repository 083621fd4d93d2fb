// Names of enum values as they are written in configs, JSON, the database and on the command
// line: one table per enum, looked up in both directions.
#pragma once

#include <optional>
#include <string_view>

namespace oomlab {

template <typename Enum>
struct NamedValue {
    Enum value;
    std::string_view name;
};

// `table` is any range of NamedValue<Enum> (an array, a vector).
template <typename Enum, typename Table>
constexpr std::string_view name_of(Enum value, const Table& table, std::string_view unknown = "?") {
    for (const NamedValue<Enum>& entry : table) {
        if (entry.value == value) {
            return entry.name;
        }
    }
    return unknown;
}

template <typename Enum, typename Table>
constexpr std::optional<Enum> value_named(std::string_view name, const Table& table) {
    for (const NamedValue<Enum>& entry : table) {
        if (entry.name == name) {
            return entry.value;
        }
    }
    return std::nullopt;
}

}  // namespace oomlab
