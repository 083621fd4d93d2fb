// Reading GloVe and word2vec text, with the quirks of the published files.
#include <gtest/gtest.h>

#include <vector>

#include "glove_test_helpers.h"
#include "test_support.h"

namespace oomlab {
namespace {

using test::no_cache;

std::vector<float> values_of(const GloveTable& table, std::int64_t row) {
    return {table.vector(row), table.vector(row) + table.dim()};
}

TEST(GloveText, SurvivesTheQuirksOfRealFiles) {
    const GloveTable table =
        GloveTable::load(test::fixture("glove/quirks_840b_style.txt"), no_cache());
    ASSERT_EQ(table.dim(), 4);
    ASSERT_EQ(table.size(), 12);
    EXPECT_EQ(table.format(), GloveFormat::Glove);
    EXPECT_FALSE(table.from_cache());

    // Tokens with spaces: the last 4 fields are the vector, the rest is the word.
    EXPECT_EQ(table.word(1), ". . .");
    EXPECT_EQ(values_of(table, 1), (std::vector<float>{0.5f, -0.25f, 1e-3f, 25.0f}));
    EXPECT_EQ(table.word(2), "at name@domain.com");  // CRLF line: no '\r' in the last value
    EXPECT_EQ(values_of(table, 2), (std::vector<float>{1, 2, 3, 4}));
    // Bytes are kept as they are: UTF-8, U+0085 (NEL), invalid UTF-8, a tab, a lone '\r'.
    EXPECT_EQ(table.word(3), "caf\xc3\xa9");
    EXPECT_EQ(table.word(4),
              "a\xc2\x85"
              "b");
    EXPECT_EQ(table.word(5), "\xff\xfe");
    EXPECT_EQ(values_of(table, 5), (std::vector<float>{7, 8, 9, 10}));
    EXPECT_EQ(table.word(9), "tab\tword");
    EXPECT_EQ(table.word(10), "cr\rinside");
    EXPECT_EQ(table.find("a\xc2\x85"
                         "b"),
              4);
    EXPECT_EQ(table.find("\xff\xfe"), 5);
    EXPECT_EQ(table.find("tab\tword"), 9);
    // Case is kept (840B is cased).
    EXPECT_EQ(table.find("Apple"), 7);
    EXPECT_EQ(table.find("apple"), 8);
    EXPECT_EQ(table.find("APPLE"), -1);
    // Duplicates keep their rows; find() returns the first; they are counted.
    EXPECT_EQ(table.duplicates(), 2);
    EXPECT_EQ(table.word(6), ",");
    EXPECT_EQ(table.find(","), 0);
    EXPECT_EQ(values_of(table, 6), (std::vector<float>{9, 9, 9, 9}));
    // The last line has no final newline and still counts.
    EXPECT_EQ(table.word(11), ". . .");
    EXPECT_EQ(table.find(". . ."), 1);
    EXPECT_EQ(values_of(table, 11), (std::vector<float>{4, 4, 4, 4}));
    EXPECT_EQ(table.find("at"), -1);
    EXPECT_EQ(table.find(""), -1);
}

TEST(GloveText, ReadsRealGloveLines) {
    const GloveTable table =
        GloveTable::load(test::fixture("glove/glove_6b_50d_sample.txt"), no_cache());
    ASSERT_EQ(table.size(), 7);
    ASSERT_EQ(table.dim(), 50);
    EXPECT_EQ(table.word(0), "the");
    EXPECT_FLOAT_EQ(table.vector(0)[0], 0.418f);
    EXPECT_FLOAT_EQ(table.vector(0)[49], -0.78581f);
    EXPECT_EQ(table.find("government"), 3);
    EXPECT_FLOAT_EQ(table.vector(3)[1], -1.0825f);
    EXPECT_EQ(table.find("\x96"), 4);  // Windows-1252 en dash: not UTF-8
    EXPECT_EQ(table.find("\x92s"), 5);
    EXPECT_FLOAT_EQ(table.vector(6)[0], 0.64757f);  // last line, no final newline
    EXPECT_EQ(table.duplicates(), 0);
}

TEST(GloveText, DetectsTheWord2VecHeader) {
    const GloveTable table =
        GloveTable::load(test::fixture("glove/word2vec_small.txt"), no_cache());
    EXPECT_EQ(table.format(), GloveFormat::Word2VecText);
    ASSERT_EQ(table.size(), 3);
    ASSERT_EQ(table.dim(), 4);
    EXPECT_EQ(table.word(0), "the");
    EXPECT_EQ(values_of(table, 0), (std::vector<float>{0.1f, 0.2f, 0.3f, 0.4f}));  // trailing space
    EXPECT_EQ(values_of(table, 2), (std::vector<float>{0.01f, 2, 3, 4}));
    EXPECT_EQ(table.find("of"), 1);
    EXPECT_EQ(table.find("3"), -1);  // the header is not a word
}

TEST(GloveText, ReadsCrlfFilesAndSkipsBlankLines) {
    const GloveTable table = GloveTable::load(test::fixture("glove/crlf_glove.txt"), no_cache());
    ASSERT_EQ(table.size(), 3);
    ASSERT_EQ(table.dim(), 2);
    EXPECT_EQ(table.word(2), "three");
    EXPECT_EQ(values_of(table, 2), (std::vector<float>{5, 6}));
}

TEST(GloveText, DetectsTheWidthFromTheMostCommonLine) {
    test::TempDir dir;
    // The first line is odd (a word with spaces); the width still comes out as 3.
    const std::string path = dir.file("odd_first.txt");
    test::write_file(path, "a b c 1 2 3\nx 1 2 3\ny 4 5 6\nz 7 8 9\n");
    const GloveTable table = GloveTable::load(path, no_cache());
    EXPECT_EQ(table.dim(), 3);
    EXPECT_EQ(table.word(0), "a b c");
    EXPECT_EQ(table.find("z"), 3);
}

TEST(GloveText, TellsANumericWordFromAHeader) {
    test::TempDir dir;
    // "123 4" followed by lines of two fields: one-dimensional vectors, not a header.
    const std::string path = dir.file("dim1.txt");
    test::write_file(path, "123 4\nabc 5\n");
    const GloveTable table = GloveTable::load(path, no_cache());
    EXPECT_EQ(table.format(), GloveFormat::Glove);
    ASSERT_EQ(table.size(), 2);
    EXPECT_EQ(table.dim(), 1);
    EXPECT_EQ(table.find("123"), 0);
    EXPECT_EQ(table.vector(0)[0], 4.0f);
}

TEST(GloveText, IgnoresAUtf8ByteOrderMark) {
    test::TempDir dir;
    const std::string path = dir.file("bom.txt");
    test::write_file(path,
                     "\xEF\xBB\xBF"
                     "2 2\nthe 1 2\nof 3 4\n");
    const GloveTable table = GloveTable::load(path, no_cache());
    EXPECT_EQ(table.format(), GloveFormat::Word2VecText);
    EXPECT_EQ(table.find("the"), 0);
}

TEST(GloveText, AcceptsSignsExponentsAndTinyValues) {
    test::TempDir dir;
    const std::string path = dir.file("numbers.txt");
    test::write_file(path, "w +1.5 -2e-3 1E2 1e-50 .5\n");
    const GloveTable table = GloveTable::load(path, no_cache());
    ASSERT_EQ(table.dim(), 5);
    EXPECT_EQ(values_of(table, 0), (std::vector<float>{1.5f, -2e-3f, 100.0f, 0.0f, 0.5f}));
}

TEST(GloveText, MaxRowsStopsReadingEarly) {
    GloveLoadOptions options = no_cache();
    options.max_rows = 5;
    const GloveTable table =
        GloveTable::load(test::fixture("glove/quirks_840b_style.txt"), options);
    ASSERT_EQ(table.size(), 5);
    EXPECT_EQ(table.word(4),
              "a\xc2\x85"
              "b");
    EXPECT_EQ(table.find("Apple"), -1);
    EXPECT_EQ(table.duplicates(), 0);  // the duplicated rows are past the limit
}

TEST(GloveText, MaxRowsDoesNotCheckRowsItNeverReads) {
    test::TempDir dir;
    const std::string path = dir.file("bad_tail.txt");
    test::write_file(path, "a 1 2\nb 3 4\nc oops 5\n");
    GloveLoadOptions options = no_cache();
    options.max_rows = 2;
    EXPECT_EQ(GloveTable::load(path, options).size(), 2);
}

TEST(GloveText, ExpectedDimIsChecked) {
    GloveLoadOptions options = no_cache();
    options.expected_dim = 4;
    EXPECT_EQ(GloveTable::load(test::fixture("glove/quirks_840b_style.txt"), options).dim(), 4);
    options.expected_dim = 300;
    const std::string message =
        test::load_error(test::fixture("glove/quirks_840b_style.txt"), options);
    EXPECT_NE(message.find("quirks_840b_style.txt"), std::string::npos) << message;
    EXPECT_NE(message.find("4 values"), std::string::npos) << message;
    EXPECT_NE(message.find("300"), std::string::npos) << message;
}

TEST(GloveText, ReportsProgressUpToOne) {
    std::vector<double> fractions;
    GloveLoadOptions options = no_cache();
    options.progress = [&](double fraction) { fractions.push_back(fraction); };
    GloveTable::load(test::fixture("glove/quirks_840b_style.txt"), options);
    ASSERT_FALSE(fractions.empty());
    EXPECT_DOUBLE_EQ(fractions.back(), 1.0);
    for (std::size_t i = 1; i < fractions.size(); ++i) {
        EXPECT_GE(fractions[i], fractions[i - 1]);
    }
}

TEST(GloveText, FormatNames) {
    EXPECT_EQ(glove_format_name(GloveFormat::Glove), "glove");
    EXPECT_EQ(glove_format_name(GloveFormat::Word2VecText), "word2vec");
    EXPECT_EQ(glove_format_name(GloveFormat::Cache), "cache");
    EXPECT_EQ(glove_format_name(GloveFormat::Synthetic), "synthetic");
}

TEST(GloveText, EmptyTableAndRowBounds) {
    const GloveTable empty;
    EXPECT_EQ(empty.size(), 0);
    EXPECT_EQ(empty.dim(), 0);
    EXPECT_EQ(empty.find("the"), -1);
    EXPECT_THROW(empty.word(0), std::out_of_range);
    const GloveTable table = GloveTable::load(test::fixture("glove/crlf_glove.txt"), no_cache());
    EXPECT_THROW(table.vector(3), std::out_of_range);
    EXPECT_THROW(table.word(-1), std::out_of_range);
}

}  // namespace
}  // namespace oomlab
