#include "oomlab/config/value_parsing.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "oomlab/common/errors.h"
#include "oomlab/common/utf8.h"

namespace oomlab::config_detail {
namespace {

std::string_view trim(std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
        text.remove_prefix(1);
    }
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
        text.remove_suffix(1);
    }
    return text;
}

[[noreturn]] void throw_bad_value(std::string_view key, std::string_view text,
                                  const std::string& expected) {
    throw BadInput(
        std::string(key) + ": " + quoted_excerpt(text) + " is not valid; expected " + expected,
        {std::string(key)});
}

}  // namespace

std::string format_real(double value) {
    // The shortest text that reads back as the same double, so a config written out and read
    // again is the same config.
    char text[32];
    const auto [end, error] = std::to_chars(text, text + sizeof text, value);
    return error == std::errc() ? std::string(text, end) : std::to_string(value);
}

std::string range_text(double minimum, double maximum, bool integer) {
    const auto number = [integer](double value) {
        if (!integer) {
            return format_real(value);
        }
        // 2^63 as a double is past every int64: the largest one is meant.
        constexpr auto kMost = std::numeric_limits<std::int64_t>::max();
        return value >= static_cast<double>(kMost) ? std::to_string(kMost)
                                                   : std::to_string(static_cast<long long>(value));
    };
    const std::string kind = integer ? "an integer" : "a number";
    if (maximum > minimum) {
        return kind + " from " + number(minimum) + " to " + number(maximum);
    }
    return kind + " >= " + number(minimum);
}

std::int64_t parse_integer(std::string_view key, std::string_view text, double minimum,
                           double maximum) {
    const std::string_view digits = trim(text);
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    const bool in_range = value >= minimum && (maximum <= minimum || value <= maximum);
    if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() ||
        !in_range) {
        throw_bad_value(key, text, range_text(minimum, maximum, true));
    }
    return value;
}

double parse_real(std::string_view key, std::string_view text, double minimum, double maximum) {
    const std::string number(trim(text));
    char* end = nullptr;
    const double value = number.empty() ? NAN : std::strtod(number.c_str(), &end);
    const bool in_range = value >= minimum && (maximum <= minimum || value <= maximum);
    if (!std::isfinite(value) || end != number.c_str() + number.size() || !in_range) {
        throw_bad_value(key, text, range_text(minimum, maximum, false));
    }
    return value;
}

bool parse_boolean(std::string_view key, std::string_view text) {
    const std::string_view word = trim(text);
    if (word == "true" || word == "1" || word == "yes" || word == "on") {
        return true;
    }
    if (word == "false" || word == "0" || word == "no" || word == "off") {
        return false;
    }
    throw_bad_value(key, text, "true or false");
}

void throw_bad_choice(std::string_view key, std::string_view text,
                      const std::vector<std::string>& choices) {
    std::string allowed;
    for (const auto& choice : choices) {
        allowed += (allowed.empty() ? "" : ", ") + choice;
    }
    throw_bad_value(key, text, "one of: " + allowed);
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) {
        row[j] = j;
    }
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
            diagonal = above;
        }
    }
    return row[b.size()];
}

}  // namespace oomlab::config_detail
