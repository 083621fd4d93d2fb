// Text -> typed value conversions for config keys; errors name the key and what is allowed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "oomlab/common/name_table.h"

namespace oomlab::config_detail {

std::int64_t parse_integer(std::string_view key, std::string_view text, double minimum,
                           double maximum);
double parse_real(std::string_view key, std::string_view text, double minimum, double maximum);
bool parse_boolean(std::string_view key, std::string_view text);
std::string format_real(double value);
std::string range_text(double minimum, double maximum, bool integer);

// Names of an enum's values, in the order the GUI offers them.
template <typename Enum>
using ChoiceTable = std::vector<NamedValue<Enum>>;

[[noreturn]] void throw_bad_choice(std::string_view key, std::string_view text,
                                   const std::vector<std::string>& choices);

template <typename Enum>
Enum parse_choice(std::string_view key, std::string_view text, const ChoiceTable<Enum>& table) {
    if (const auto value = value_named<Enum>(text, table)) {
        return *value;
    }
    std::vector<std::string> names;
    for (const auto& entry : table) {
        names.emplace_back(entry.name);
    }
    throw_bad_choice(key, text, names);
}

template <typename Enum>
std::string_view choice_name(Enum value, const ChoiceTable<Enum>& table) {
    return name_of(value, table);
}

std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace oomlab::config_detail
