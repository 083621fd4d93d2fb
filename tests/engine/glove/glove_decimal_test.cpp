// The short-decimal shortcut must give exactly what std::from_chars gives.
#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <random>
#include <string>

#include "glove/fast_decimal.h"
#include "glove_test_helpers.h"

namespace oomlab {
namespace {

using glove_detail::parse_short_decimal;
using test::bits_of;

// When the shortcut accepts `text`, from_chars must accept the same characters and produce
// the same bits. Returns whether the shortcut took it.
bool expect_same_as_from_chars(const std::string& text) {
    const char* begin = text.data();
    const char* end = begin + text.size();
    float fast = 0.0f;
    const char* fast_end = parse_short_decimal(begin, end, fast);
    if (fast_end == nullptr) {
        return false;
    }
    float reference = 0.0f;
    const auto [reference_end, error] = std::from_chars(begin, end, reference);
    EXPECT_EQ(error, std::errc()) << text;
    EXPECT_EQ(fast_end, reference_end) << text;
    EXPECT_EQ(bits_of(fast), bits_of(reference)) << text << ": " << fast << " vs " << reference;
    return true;
}

TEST(GloveFastDecimal, TakesTheCommonShapes) {
    float value = 0.0f;
    const std::string cases[] = {"0.418", "-0.00066023", "4.0071", "-1", "0", "-0", "12.5 7"};
    const float expected[] = {0.418f, -0.00066023f, 4.0071f, -1.0f, 0.0f, -0.0f, 12.5f};
    for (std::size_t i = 0; i < std::size(cases); ++i) {
        const std::string& text = cases[i];
        const char* end = parse_short_decimal(text.data(), text.data() + text.size(), value);
        ASSERT_NE(end, nullptr) << text;
        EXPECT_EQ(bits_of(value), bits_of(expected[i])) << text;
        expect_same_as_from_chars(text);
    }
}

TEST(GloveFastDecimal, LeavesTheRestToFromChars) {
    float value = 0.0f;
    for (const std::string text : {"1e5", "2.5E-3", "nan", "inf", "+1", "", "-", ".", "x1",
                                   "123456789.123", "0.000000000001", "16777217"}) {
        EXPECT_EQ(parse_short_decimal(text.data(), text.data() + text.size(), value), nullptr)
            << text;
    }
}

TEST(GloveFastDecimal, AgreesWithFromCharsBitForBit) {
    std::mt19937_64 random(12345);
    std::uniform_int_distribution<int> digit(0, 9);
    std::uniform_int_distribution<int> length(1, 12);
    const std::string suffixes[] = {"", " ", " 0.123456789", "\n", "e5", "x", ".5", "-"};
    int taken = 0;
    for (int i = 0; i < 2'000'000; ++i) {
        std::string text = (random() & 1) ? "-" : "";
        const int integer_digits = length(random) % 4;
        const int fraction_digits = length(random);
        for (int d = 0; d < integer_digits; ++d) {
            text += static_cast<char>('0' + digit(random));
        }
        if (fraction_digits > 0 && (random() % 8) != 0) {
            text += '.';
            for (int d = 0; d < fraction_digits; ++d) {
                text += static_cast<char>('0' + digit(random));
            }
        }
        // What follows the number matters too: the shortcut reads 8 bytes at a time.
        text += suffixes[random() % std::size(suffixes)];
        taken += expect_same_as_from_chars(text) ? 1 : 0;
        if (HasFailure()) {
            return;
        }
    }
    EXPECT_GT(taken, 700'000);  // the comparison really ran on most inputs
}

TEST(GloveFastDecimal, AgreesOnShortestFloatTexts) {
    // Floats as write_text writes them: shortest round-trip text, magnitudes around GloVe's.
    std::mt19937 random(7);
    std::uniform_real_distribution<float> magnitude(-6.0f, 1.5f);
    int taken = 0;
    for (int i = 0; i < 1'000'000; ++i) {
        const float value = std::pow(10.0f, magnitude(random)) * ((random() & 1) ? -1.0f : 1.0f);
        char text[32];
        char* end = std::to_chars(text, text + sizeof text, value).ptr;
        taken += expect_same_as_from_chars(std::string(text, end) + " 1") ? 1 : 0;
        if (HasFailure()) {
            return;
        }
    }
    EXPECT_GT(taken, 300'000);
}

}  // namespace
}  // namespace oomlab
