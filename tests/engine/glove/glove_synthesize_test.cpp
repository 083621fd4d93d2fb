// Synthetic tables: the exact shape asked for, deterministic, with GloVe-like values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "glove_test_helpers.h"
#include "oomlab/glove/variants.h"
#include "test_support.h"

namespace oomlab {
namespace {

TEST(GloveSynthesize, HasTheShapeAndWordsAskedFor) {
    const GloveTable table = GloveTable::synthesize(1'000, 30, 7, {"the", "of", "the"});
    EXPECT_EQ(table.size(), 1'000);
    EXPECT_EQ(table.dim(), 30);
    EXPECT_EQ(table.format(), GloveFormat::Synthetic);
    EXPECT_TRUE(table.path().empty());
    EXPECT_FALSE(table.from_cache());
    EXPECT_EQ(table.word(0), "the");
    EXPECT_EQ(table.word(1), "of");
    EXPECT_EQ(table.word(3), "<synthetic_3>");
    EXPECT_EQ(table.word(999), "<synthetic_999>");
    EXPECT_EQ(table.find("the"), 0);
    EXPECT_EQ(table.find("<synthetic_500>"), 500);
    EXPECT_EQ(table.find("<synthetic_1000>"), -1);
    EXPECT_EQ(table.duplicates(), 1);
}

TEST(GloveSynthesize, LeadingWordsBeyondTheRowCountAreDropped) {
    const GloveTable table = GloveTable::synthesize(2, 4, 1, {"a", "b", "c"});
    EXPECT_EQ(table.size(), 2);
    EXPECT_EQ(table.find("c"), -1);
    EXPECT_EQ(GloveTable::synthesize(0, 4, 1).size(), 0);
}

TEST(GloveSynthesize, IsDeterministicPerSeed) {
    const GloveTable a = GloveTable::synthesize(20'000, 50, 42);
    const GloveTable b = GloveTable::synthesize(20'000, 50, 42);
    const GloveTable c = GloveTable::synthesize(20'000, 50, 43);
    EXPECT_TRUE(test::same_table(a, b));
    EXPECT_NE(std::memcmp(a.vector(0), c.vector(0), sizeof(float) * 50), 0);
    // A row does not depend on how many rows were asked for (nor on the thread count).
    const GloveTable shorter = GloveTable::synthesize(5'000, 50, 42);
    EXPECT_EQ(std::memcmp(a.vector(4'999), shorter.vector(4'999), sizeof(float) * 50), 0);
}

TEST(GloveSynthesize, ValuesLookLikeGlove) {
    constexpr int kDim = 50;
    const GloveTable table = GloveTable::synthesize(40'000, kDim, 3);
    double sum = 0.0;
    double squares = 0.0;
    double fourth = 0.0;
    float largest = 0.0f;
    std::vector<double> dim_sum(kDim, 0.0);
    std::vector<double> dim_squares(kDim, 0.0);
    const double count = static_cast<double>(table.size()) * kDim;
    for (std::int64_t row = 0; row < table.size(); ++row) {
        for (int d = 0; d < kDim; ++d) {
            const double v = table.vector(row)[d];
            sum += v;
            squares += v * v;
            dim_sum[d] += v;
            dim_squares[d] += v * v;
            largest = std::max(largest, std::fabs(table.vector(row)[d]));
        }
    }
    const double mean = sum / count;
    const double variance = squares / count - mean * mean;
    for (std::int64_t row = 0; row < table.size(); ++row) {
        for (int d = 0; d < kDim; ++d) {
            const double centered = table.vector(row)[d] - dim_sum[d] / table.size();
            fourth += centered * centered * centered * centered;
        }
    }
    std::vector<double> dim_std(kDim);
    double within_variance = 0.0;
    for (int d = 0; d < kDim; ++d) {
        const double dim_mean = dim_sum[d] / table.size();
        const double dim_variance = dim_squares[d] / table.size() - dim_mean * dim_mean;
        dim_std[d] = std::sqrt(dim_variance);
        within_variance += dim_variance / kDim;
    }
    const double kurtosis = fourth / count / (within_variance * within_variance);

    EXPECT_LT(std::fabs(mean), 0.1);
    EXPECT_GT(std::sqrt(variance), 0.3);
    EXPECT_LT(std::sqrt(variance), 0.55);
    EXPECT_GT(kurtosis, 3.2);  // heavier tails than a normal (3)
    EXPECT_LT(kurtosis, 6.0);
    EXPECT_GT(largest, 1.5f);
    EXPECT_LT(largest, 6.0f);
    const auto [low, high] = std::minmax_element(dim_std.begin(), dim_std.end());
    EXPECT_GT(*high / *low, 1.2);  // dimensions differ in spread
}

TEST(GloveSynthesize, WriteTextReadsBackExactly) {
    test::TempDir dir;
    const std::string path = dir.file("synthetic.txt");
    const GloveTable table = GloveTable::synthesize(9'000, 25, 11, {"hello", "a b"});
    table.write_text(path);
    const GloveTable read = GloveTable::load(path, test::no_cache());
    EXPECT_EQ(read.format(), GloveFormat::Glove);
    EXPECT_TRUE(test::same_table(table, read));
    EXPECT_EQ(read.find("a b"), 1);
    // Values carry at most 5 significant digits, like the published files.
    std::ifstream in(path);
    std::string word;
    std::string first_value;
    in >> word >> first_value;
    const auto digits = std::count_if(first_value.begin(), first_value.end(),
                                      [](char c) { return c >= '1' && c <= '9'; });
    EXPECT_LE(digits, 5) << first_value;
}

TEST(GloveSynthesize, MatchesAVariantShape) {
    const GloveVariant* variant = find_glove_variant("twitter.27B.25d");
    ASSERT_NE(variant, nullptr);
    const GloveTable table = GloveTable::synthesize(variant->words, variant->dim, 1);
    EXPECT_EQ(table.size(), 1'193'514);
    EXPECT_EQ(table.dim(), 25);
    EXPECT_EQ(table.find("<synthetic_1193513>"), 1'193'513);
}

TEST(GloveSynthesize, RejectsImpossibleShapes) {
    EXPECT_THROW(GloveTable::synthesize(-1, 50, 1), BadInput);
    EXPECT_THROW(GloveTable::synthesize(10, 0, 1), BadInput);
}

TEST(GloveSynthesize, WriteTextRefusesWordsWithLineBreaks) {
    test::TempDir dir;
    const GloveTable table = GloveTable::synthesize(3, 2, 1, {"ok", "two\nlines"});
    EXPECT_THROW(table.write_text(dir.file("bad.txt")), BadInput);
    EXPECT_FALSE(std::filesystem::exists(dir.file("bad.txt")));
}

}  // namespace
}  // namespace oomlab
