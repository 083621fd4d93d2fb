// The parser gives the same table whatever the thread count and block size.
#include <gtest/gtest.h>

#include <cstring>

#include "glove/text_parser.h"
#include "glove_test_helpers.h"
#include "test_support.h"

namespace oomlab {
namespace {

using glove_detail::parse_vector_text;
using glove_detail::ParsedText;
using glove_detail::TextParseOptions;

// A few MB of text with every quirk sprinkled in, so slices and blocks cut near them.
std::string quirky_text(int rows) {
    std::string text;
    for (int row = 0; row < rows; ++row) {
        switch (row % 7) {
            case 0:
                text += "w" + std::to_string(row);
                break;
            case 1:
                text += ". . " + std::to_string(row);
                break;  // spaces in the token
            case 2:
                text += "\xc2\x85x" + std::to_string(row);
                break;  // U+0085
            case 3:
                text += "\xff" + std::to_string(row);
                break;  // invalid UTF-8
            case 4:
                text += "dup";
                break;  // duplicated token
            default:
                text += "v" + std::to_string(row);
                break;
        }
        for (int d = 0; d < 20; ++d) {
            text += " " + std::to_string((row * 31 + d * 7) % 2001 - 1000) + "e-3";
        }
        text += row % 5 == 0 ? "\r\n" : "\n";
        if (row % 1000 == 999) {
            text += "\n";  // a blank line now and then
        }
    }
    return text;
}

bool same_parse(const ParsedText& a, const ParsedText& b) {
    return a.rows == b.rows && a.dim == b.dim && a.word_offsets == b.word_offsets &&
           a.word_bytes == b.word_bytes &&
           std::memcmp(a.matrix.data(), b.matrix.data(), sizeof(float) * a.rows * a.dim) == 0;
}

TEST(GloveParallel, ThreadsAndBlockSizesDoNotChangeTheResult) {
    test::TempDir dir;
    const std::string path = dir.file("quirky.txt");
    constexpr int kRows = 30'000;
    test::write_file(path, quirky_text(kRows));

    TextParseOptions reference_options;
    reference_options.threads = 1;
    const ParsedText reference = parse_vector_text(path, reference_options);
    ASSERT_EQ(reference.rows, kRows);
    ASSERT_EQ(reference.dim, 20);
    ASSERT_TRUE(reference.complete);
    const std::string second_word(reference.word_bytes.data() + reference.word_offsets[1],
                                  reference.word_offsets[2] - reference.word_offsets[1]);
    EXPECT_EQ(second_word, ". . 1");

    for (const int threads : {2, 3, 8}) {
        for (const std::size_t block :
             {std::size_t{4096}, std::size_t{100'000}, std::size_t{16} << 20}) {
            TextParseOptions options;
            options.threads = threads;
            options.block_bytes = block;
            EXPECT_TRUE(same_parse(reference, parse_vector_text(path, options)))
                << threads << " threads, blocks of " << block << " bytes";
        }
    }
}

TEST(GloveParallel, PublicLoadMatchesAcrossThreadCounts) {
    test::TempDir dir;
    const std::string path = dir.file("quirky.txt");
    test::write_file(path, quirky_text(20'000));
    GloveLoadOptions one = test::no_cache();
    one.threads = 1;
    GloveLoadOptions four = test::no_cache();
    four.threads = 4;
    const GloveTable a = GloveTable::load(path, one);
    const GloveTable b = GloveTable::load(path, four);
    EXPECT_TRUE(test::same_table(a, b));
    EXPECT_EQ(a.duplicates(), 20'000 / 7 + (20'000 % 7 > 4 ? 1 : 0) - 1);
    EXPECT_EQ(a.find("dup"), 4);
}

TEST(GloveParallel, ErrorLineIsRightAcrossBlocksAndThreads) {
    test::TempDir dir;
    const std::string path = dir.file("bad.txt");
    std::string text = quirky_text(10'000);
    // Break the first value on line 7,777 (row 7,769: seven blank lines come before it).
    std::size_t pos = 0;
    for (int line = 1; line < 7'777; ++line) {
        pos = text.find('\n', pos) + 1;
    }
    text.insert(text.find(' ', pos) + 1, "oops");
    test::write_file(path, text);
    for (const int threads : {1, 4}) {
        TextParseOptions options;
        options.threads = threads;
        options.block_bytes = 8192;
        try {
            parse_vector_text(path, options);
            ADD_FAILURE() << "expected an error";
        } catch (const BadInput& error) {
            EXPECT_EQ(std::string(error.what()).rfind(path + ":7777: ", 0), 0u) << error.what();
        }
    }
}

TEST(GloveParallel, MaxRowsAcrossBlocks) {
    test::TempDir dir;
    const std::string path = dir.file("quirky.txt");
    test::write_file(path, quirky_text(5'000));
    TextParseOptions options;
    options.threads = 3;
    options.block_bytes = 4096;
    options.max_rows = 1'234;
    const ParsedText parsed = parse_vector_text(path, options);
    EXPECT_EQ(parsed.rows, 1'234);
    EXPECT_FALSE(parsed.complete);
    EXPECT_EQ(parsed.word_offsets.size(), 1'235u);
    TextParseOptions all;
    all.max_rows = 5'000;  // exactly the row count: the whole file was read
    EXPECT_TRUE(parse_vector_text(path, all).complete);
}

TEST(GloveParallel, LineLongerThanTheBlockGrowsTheBuffer) {
    test::TempDir dir;
    const std::string path = dir.file("long.txt");
    std::string text = "short 1 2\n" + std::string(20'000, 'x') + " 3 4\nend 5 6";
    test::write_file(path, text);
    TextParseOptions options;
    options.block_bytes = 4096;
    const ParsedText parsed = parse_vector_text(path, options);
    ASSERT_EQ(parsed.rows, 3);
    EXPECT_EQ(parsed.word_offsets[2] - parsed.word_offsets[1], 20'000u);
    EXPECT_EQ(static_cast<const float*>(parsed.matrix.data())[5], 6.0f);
}

}  // namespace
}  // namespace oomlab
