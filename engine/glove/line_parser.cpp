#include "line_parser.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "fast_decimal.h"
#include "oomlab/common/bit_cast.h"

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
    return (bit_cast<std::uint32_t>(value) & 0x7F800000u) != 0x7F800000u;
}

// The spaces among the 64 bytes at `p`, one bit each (bit k for p[k]).
std::uint64_t space_bits(const char* p) {
    std::uint64_t bits = 0;
#if defined(__SSE2__)
    for (int k = 0; k < 64; k += 16) {
        const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + k));
        const auto spaces = static_cast<std::uint32_t>(
            _mm_movemask_epi8(_mm_cmpeq_epi8(bytes, _mm_set1_epi8(' '))));
        bits |= std::uint64_t{spaces} << k;
    }
#else
    for (int k = 0; k < 64; ++k) {
        bits |= std::uint64_t{p[k] == ' '} << k;
    }
#endif
    return bits;
}

// The value [p, end), when std::from_chars takes it whole and it is finite.
bool parse_value(const char* p, const char* end, float& value) {
    if (parse_short_decimal(p, end, value) == end) {
        return true;
    }
    const auto [parsed_end, error] = std::from_chars(p, end, value);
    return error == std::errc() && parsed_end == end && is_finite_bits(value);
}

// The values [p, end), exactly `dim` of them, one space apart. The spaces are found first, 64
// bytes at a time, so that no value's parse waits on where the one before it ended (a chain of
// dependent loads that held the parse to about 10 ns a value); most values then take
// parse_common_value. False at any surprise, for the careful path to decide.
bool parse_values(const char* p, const char* end, int dim, float* values) {
    // parse_common_value reads 10 bytes from a value's start: the line has them while 16
    // remain before its end; the last values of a line take the bounded parse.
    constexpr std::ptrdiff_t kCommonValueReach = 16;
    int count = 0;
    const char* start = p;
    for (const char* chunk = p; chunk < end; chunk += 64) {
        char padded[64];
        const char* scanned = chunk;
        if (end - chunk < 64) {  // the line's last bytes, never read past its end
            std::memset(padded, 'x', sizeof padded);
            std::memcpy(padded, chunk, static_cast<std::size_t>(end - chunk));
            scanned = padded;
        }
        for (std::uint64_t bits = space_bits(scanned); bits != 0; bits &= bits - 1) {
            const char* space = chunk + __builtin_ctzll(bits);
            if (count + 1 == dim) {
                return false;  // more values than dim
            }
            float& value = values[count++];
            const bool common =
                end - start >= kCommonValueReach && parse_common_value(start, space, value);
            if (!common && !parse_value(start, space, value)) {
                return false;
            }
            start = space + 1;
        }
    }
    return count + 1 == dim && parse_value(start, end, values[count]);
}

// The common case: the word has no space, so values follow the first space. Any surprise
// (a space in the word, a bad value, a wrong count) returns nullptr and the careful path
// decides.
const char* parse_simple_line(const char* begin, const char* end, int dim, float* values) {
    const auto* space = static_cast<const char*>(std::memchr(begin, ' ', end - begin));
    if (space == nullptr || space == begin || !parse_values(space + 1, end, dim, values)) {
        return nullptr;
    }
    return space;
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
    if (const char* word_end = parse_simple_line(begin, end, dim, values)) {
        return word_end;
    }
    return parse_careful_line(begin, end, dim, values, error);
}

}  // namespace oomlab::glove_detail
