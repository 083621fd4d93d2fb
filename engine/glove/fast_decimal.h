// A shortcut in front of std::from_chars for the numbers vector files are made of: short plain
// decimals such as "-0.41242". They are exactly m / 10^k with m <= 2^24 and k <= 10, where both
// m and 10^k are exact floats, so one IEEE division gives the correctly rounded float: the very
// bits std::from_chars returns (Clinger's fast path), at a fraction of its cost. Anything else
// (exponents, long mantissas, "nan", "+1") is left to std::from_chars.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace oomlab::glove_detail {

inline bool is_decimal_digit(char c) {
    return static_cast<unsigned>(c - '0') < 10;
}

// Namespace scope, so they are not rebuilt on the stack at every call.
inline constexpr float kFloatPowersOf10[] = {1e0f, 1e1f, 1e2f, 1e3f, 1e4f, 1e5f,
                                             1e6f, 1e7f, 1e8f, 1e9f, 1e10f};
inline constexpr float kSigns[] = {1.0f, -1.0f};
inline constexpr std::uint64_t kIntegerPowersOf10[] = {1,      10,      100,      1000,     10000,
                                                       100000, 1000000, 10000000, 100000000};

// Up to this mantissa m, m and 10^k (k <= 10) are both exact floats (see above).
inline constexpr std::uint64_t kMaxExactMantissa = std::uint64_t{1} << 24;

// The float nearest -?m / 10^k, for m <= kMaxExactMantissa and k <= 10: one IEEE division.
// Signs are a coin toss in vector files: multiplied, not branched on (exact, and -0 stays -0).
inline float exact_decimal(std::uint64_t mantissa, std::ptrdiff_t fraction_digits, bool negative) {
    return static_cast<float>(mantissa) / kFloatPowersOf10[fraction_digits] *
           kSigns[negative ? 1 : 0];
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define OOMLAB_GLOVE_WORD_AT_A_TIME 1

// How many of the 8 bytes of `chunk` (first character in the lowest byte) are digits before
// the first non-digit. A byte whose value minus '0' is 10 or more gets its top bit set; a carry
// out of such a byte can only disturb the bytes after it, which are not counted anyway.
inline int leading_digit_count(std::uint64_t chunk) {
    const std::uint64_t offsets = chunk ^ 0x3030303030303030ull;  // digits become 0..9
    const std::uint64_t non_digits =
        ((offsets + 0x7676767676767676ull) | offsets) & 0x8080808080808080ull;
    return non_digits == 0 ? 8 : __builtin_ctzll(non_digits) >> 3;
}

// The number written by 8 digit values (0..9), most significant in the lowest byte: pairs of
// digits, then pairs of pairs, with no carry between lanes.
inline std::uint64_t eight_digit_value(std::uint64_t digits) {
    const std::uint64_t pairs = (digits * 10 + (digits >> 8)) & 0x00FF00FF00FF00FFull;
    const std::uint64_t quads = (pairs * 100 + (pairs >> 16)) & 0x0000FFFF0000FFFFull;
    return (quads & 0xFFFF) * 10000 + (quads >> 32);
}
#endif

// Adds the digits at `p` to `mantissa` and moves `p` past them; returns how many there were.
inline std::ptrdiff_t take_digits(const char*& p, const char* end, std::uint64_t& mantissa) {
    const char* const begin = p;
#ifdef OOMLAB_GLOVE_WORD_AT_A_TIME
    // Fraction lengths vary from number to number, which a digit-by-digit loop keeps
    // mispredicting; eight bytes at a time avoids that.
    if (end - p >= 8) {
        std::uint64_t chunk = 0;
        std::memcpy(&chunk, p, sizeof chunk);
        const int count = leading_digit_count(chunk);
        if (count > 0) {
            const std::uint64_t aligned = (chunk ^ 0x3030303030303030ull) << (64 - 8 * count);
            mantissa = mantissa * kIntegerPowersOf10[count] + eight_digit_value(aligned);
            p += count;
        }
        if (count < 8) {
            return p - begin;
        }
    }
#endif
    for (; p < end && is_decimal_digit(*p); ++p) {
        mantissa = mantissa * 10 + static_cast<unsigned>(*p - '0');
    }
    return p - begin;
}

// Parses a plain decimal at the start of [p, end). On success stores the value and returns the
// end of the number; returns nullptr when the text is not such a number (nothing stored).
// Always inlined: it runs once per value, hundreds of millions of times for a large file.
__attribute__((always_inline)) inline const char* parse_short_decimal(const char* p,
                                                                      const char* end,
                                                                      float& value) {
    constexpr std::ptrdiff_t kMaxIntegerDigits = 8;
    constexpr std::ptrdiff_t kMaxFractionDigits = 10;

    const bool negative = p < end && *p == '-';
    p += negative ? 1 : 0;
    const char* const integer_begin = p;
    std::uint64_t mantissa = 0;
    for (; p < end && is_decimal_digit(*p); ++p) {  // usually one digit
        mantissa = mantissa * 10 + static_cast<unsigned>(*p - '0');
    }
    const std::ptrdiff_t integer_digits = p - integer_begin;
    std::ptrdiff_t fraction_digits = 0;
    if (p < end && *p == '.') {
        ++p;
        fraction_digits = take_digits(p, end, mantissa);
    }
    if (integer_digits + fraction_digits == 0 || integer_digits > kMaxIntegerDigits ||
        fraction_digits > kMaxFractionDigits || mantissa > kMaxExactMantissa ||
        (p < end && (*p == 'e' || *p == 'E'))) {
        return nullptr;
    }
    value = exact_decimal(mantissa, fraction_digits, negative);
    return p;
}

#ifdef OOMLAB_GLOVE_WORD_AT_A_TIME
// The value [p, end) when it has the shape nearly every value of a vector file has: "-?D.F",
// one integer digit and 1 to 7 fraction digits. Its end is known (the caller found the spaces
// first), so nothing here waits on where the value before it ended. Reads 10 bytes from p
// whatever `end` is: the caller makes sure they are there. Returns false for any other text,
// nothing stored; the value is the very float parse_short_decimal gives.
inline bool parse_common_value(const char* p, const char* end, float& value) {
    const bool negative = *p == '-';
    p += negative ? 1 : 0;
    const std::ptrdiff_t fraction_digits = end - p - 2;
    const unsigned first = static_cast<unsigned char>(p[0]) - unsigned{'0'};
    if (fraction_digits < 1 || fraction_digits > 7 || first > 9 || p[1] != '.') {
        return false;
    }
    std::uint64_t chunk = 0;
    std::memcpy(&chunk, p + 2, sizeof chunk);
    if (leading_digit_count(chunk) < fraction_digits) {
        return false;
    }
    const std::uint64_t aligned = (chunk ^ 0x3030303030303030ull) << (64 - 8 * fraction_digits);
    const std::uint64_t mantissa =
        first * kIntegerPowersOf10[fraction_digits] + eight_digit_value(aligned);
    if (mantissa > kMaxExactMantissa) {
        return false;
    }
    value = exact_decimal(mantissa, fraction_digits, negative);
    return true;
}
#else
inline bool parse_common_value(const char*, const char*, float&) {
    return false;
}
#endif

}  // namespace oomlab::glove_detail
