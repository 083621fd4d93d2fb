// One line of vector text, parsed: the values are std::from_chars's floats bit for bit, and a
// line with any field it would not take whole is refused, whatever path a value took (the
// common shape, the short decimal, from_chars) and wherever it lies in the line.
#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "glove/line_parser.h"
#include "glove_test_helpers.h"

namespace oomlab {
namespace {

using glove_detail::parse_vector_line;
using test::bits_of;

// A value as vector files write them, or now and then one of the shapes they rarely hold.
std::string random_value(std::mt19937& random) {
    static const char* const kOdd[] = {
        "0.5",      "-1",        "12.5",      "-123.456", "0.12345678", "-0.123456789",
        "1e-05",    "-2.5E3",    "16777216",  "16777217", "0.16777217", "1.6777217",
        "99999999", "7.0000000", "0",         "-0",       "5.",         ".5",
        "-.5",      "1e-50",     "0.0000001", "nan",      "inf",        "+1",
        "0.x",      "1.2.3",     "-",         "",         "0x10",       "3.4028236e38"};
    if (random() % 50 != 0) {
        std::string text = (random() & 1) ? "-" : "";
        text += static_cast<char>('0' + random() % 10);
        text += '.';
        for (unsigned d = 0, n = 1 + random() % 9; d < n; ++d) {
            text += static_cast<char>('0' + random() % 10);
        }
        return text;
    }
    return kOdd[random() % std::size(kOdd)];
}

// What the line should give: every field after the word taken whole by std::from_chars, a
// finite float, as the file format allows it: a leading '+' too, and a value too small for a
// float rounded to zero or a subnormal. False when some field is not such a number.
bool reference_values(const std::vector<std::string>& fields, std::vector<float>& values) {
    values.clear();
    for (const std::string& field : fields) {
        const char* begin = field.data() + (field.rfind('+', 0) == 0 ? 1 : 0);
        const char* end = field.data() + field.size();
        float value = 0.0f;
        auto [parsed_end, error] = std::from_chars(begin, end, value);
        if (error == std::errc::result_out_of_range && parsed_end == end) {
            double wide = 0.0;
            std::from_chars(begin, end, wide);
            value = static_cast<float>(wide);
            error = std::fabs(wide) < 1.0 ? std::errc() : error;
        }
        if (begin == end || error != std::errc() || parsed_end != end ||
            (bits_of(value) & 0x7F800000u) == 0x7F800000u) {
            return false;
        }
        values.push_back(value);
    }
    return true;
}

TEST(GloveLine, EveryValueIsFromCharsBitForBitAndEveryBadFieldRefusesTheLine) {
    std::mt19937 random(2026);
    int parsed_lines = 0;
    int refused_lines = 0;
    for (int line_number = 0; line_number < 20'000; ++line_number) {
        // Widths of real files and short ones, so values fall at every place of the 64-byte
        // blocks the parser scans and near the line's end.
        const int dim = std::vector<int>{1, 2, 3, 5, 7, 25, 50, 300}[random() % 8];
        std::vector<std::string> fields;
        for (int i = 0; i < dim; ++i) {
            fields.push_back(random_value(random));
        }
        std::string line = "word" + std::to_string(line_number);
        for (const std::string& field : fields) {
            line += ' ' + field;
        }
        // The text after the line, which no parse may take for part of it.
        const std::string text = line + "\n0.125 0.25 0.5 0.75 0.875 0.9375 0.96875";
        std::vector<float> values(static_cast<std::size_t>(dim), -7.0f);
        std::string error;
        const char* word_end =
            parse_vector_line(text.data(), text.data() + line.size(), dim, values.data(), error);
        std::vector<float> expected;
        if (!reference_values(fields, expected)) {
            EXPECT_EQ(word_end, nullptr) << line;
            EXPECT_FALSE(error.empty()) << line;
            ++refused_lines;
            continue;
        }
        ASSERT_NE(word_end, nullptr) << line << ": " << error;
        EXPECT_EQ(std::string(text.data(), word_end), "word" + std::to_string(line_number));
        for (int i = 0; i < dim; ++i) {
            ASSERT_EQ(bits_of(values[i]), bits_of(expected[i]))
                << "value " << i + 1 << " '" << fields[i] << "' of " << line;
        }
        ++parsed_lines;
    }
    // Both kinds of line were really tried.
    EXPECT_GT(parsed_lines, 5'000);
    EXPECT_GT(refused_lines, 1'000);
}

TEST(GloveLine, MissingOrEmptyFieldsAreRefusedAndAWordKeepsItsSpaces) {
    std::vector<float> values(3);
    std::string error;
    for (const std::string line : {"w 0.1 0.2", "w 0.1  0.2 0.3", "w 0.1 0.2 0.3 "}) {
        EXPECT_EQ(
            parse_vector_line(line.data(), line.data() + line.size(), 3, values.data(), error),
            nullptr)
            << line;
    }
    // A word with spaces in it keeps them: the last three fields are the vector.
    const std::string spaced = "new york 0.125 -0.25 0.5";
    const char* word_end =
        parse_vector_line(spaced.data(), spaced.data() + spaced.size(), 3, values.data(), error);
    ASSERT_NE(word_end, nullptr) << error;
    EXPECT_EQ(std::string(spaced.data(), word_end), "new york");
    EXPECT_EQ(values, (std::vector<float>{0.125f, -0.25f, 0.5f}));
}

}  // namespace
}  // namespace oomlab
