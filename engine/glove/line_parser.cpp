#include "line_parser.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <string_view>

#include "fast_decimal.h"

namespace oomlab::glove_detail {
namespace {

constexpr std::size_t kQuotedFieldChars = 24;

std::string quoted(const char* begin, const char* end) {
    std::string_view field(begin, static_cast<std::size_t>(end - begin));
    if (field.size() > kQuotedFieldChars) {
        return "'" + std::string(field.substr(0, kQuotedFieldChars)) + "...'";
    }
    return "'" + std::string(field) + "'";
}

bool is_finite_bits(float value) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    return (bits & 0x7F800000u) != 0x7F800000u;
}

// The common case: the word has no space, so values follow the first space. Any surprise
// (a space in the word, a bad value, a wrong count) returns false and the careful path decides.
bool parse_simple_line(const char* begin, const char* end, int dim, float* values,
                       const char*& word_end) {
    const auto* space = static_cast<const char*>(std::memchr(begin, ' ', end - begin));
    if (space == nullptr || space == begin) {
        return false;
    }
    const char* p = space + 1;
    std::uint32_t exponent_all_ones = 0;
    for (int i = 0; i < dim; ++i) {
        const char* next = parse_short_decimal(p, end, values[i]);
        if (next == nullptr) {  // finite by construction above; from_chars may give NaN/inf
            const auto [parsed_end, error] = std::from_chars(p, end, values[i]);
            if (error != std::errc()) {
                return false;
            }
            next = parsed_end;
            exponent_all_ones |= static_cast<std::uint32_t>(!is_finite_bits(values[i]));
        }
        if (i + 1 < dim) {
            if (next == end || *next != ' ') {
                return false;
            }
            p = next + 1;
        } else if (next != end) {
            return false;
        }
    }
    word_end = space;
    return exponent_all_ones == 0;
}

// A value that std::from_chars rejected as out of range: tiny ones round to zero or a
// subnormal, huge ones are errors.
bool parse_out_of_range(const char* begin, const char* end, float& value) {
    double wide = 0.0;
    const auto [next, error] = std::from_chars(begin, end, wide);
    if (error != std::errc() || next != end || !(std::fabs(wide) < 1.0)) {
        return false;
    }
    value = static_cast<float>(wide);
    return true;
}

constexpr std::ptrdiff_t kMaxSpacesInWord = 8;

const char* parse_careful_line(const char* begin, const char* end, int dim, float* values,
                               std::string& error) {
    // Walk back over `dim` fields; what is left is the word.
    const char* vector_begin = end;
    int spaces = 0;
    for (const char* p = end; p > begin && spaces < dim;) {
        --p;
        if (*p == ' ') {
            ++spaces;
            vector_begin = p;
        }
    }
    if (spaces < dim) {
        error = "expected a word and " + std::to_string(dim) + " values, found " +
                std::to_string(spaces + 1) + " fields; fix or remove this line";
        return nullptr;
    }
    // 840B's words with spaces have a few; a "word" of many fields is a line with too many
    // values (found by the bad-input corpus: a 10 MB line in a 3-wide file).
    const auto word_spaces = std::count(begin, vector_begin, ' ');
    if (word_spaces > kMaxSpacesInWord) {
        error = "expected a word and " + std::to_string(dim) + " values, found " +
                std::to_string(word_spaces + 1 + dim) + " fields; fix or remove this line";
        return nullptr;
    }
    const char* p = vector_begin + 1;
    for (int i = 0; i < dim; ++i) {
        const char* field_end = static_cast<const char*>(std::memchr(p, ' ', end - p));
        if (field_end == nullptr) {
            field_end = end;
        }
        const char* number = (p < field_end && *p == '+') ? p + 1 : p;
        auto [next, code] = std::from_chars(number, field_end, values[i]);
        if (code == std::errc::result_out_of_range && next == field_end &&
            parse_out_of_range(number, field_end, values[i])) {
            code = std::errc();
        }
        const std::string which = "value " + std::to_string(i + 1) + " of " + std::to_string(dim);
        if (code == std::errc::result_out_of_range) {
            error = which + " " + quoted(p, field_end) + " does not fit in a float";
            return nullptr;
        }
        if (code != std::errc() || next != field_end) {
            error = which + " " + quoted(p, field_end) + " is not a number";
            return nullptr;
        }
        if (!is_finite_bits(values[i])) {
            error =
                which + " is " + quoted(p, field_end) + "; NaN and infinite values are not allowed";
            return nullptr;
        }
        p = field_end + 1;
    }
    return vector_begin;
}

}  // namespace

const char* parse_vector_line(const char* begin, const char* end, int dim, float* values,
                              std::string& error) {
    const char* word_end = nullptr;
    if (parse_simple_line(begin, end, dim, values, word_end)) {
        return word_end;
    }
    return parse_careful_line(begin, end, dim, values, error);
}

}  // namespace oomlab::glove_detail
