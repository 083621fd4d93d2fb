#include <gtest/gtest.h>

#include "oomlab/data/length_stats.h"

namespace oomlab {
namespace {

TEST(LengthStats, NearestRankPercentiles) {
    std::vector<std::size_t> lengths;
    for (std::size_t i = 100; i >= 1; --i) {
        lengths.push_back(i);  // 1..100, unsorted
    }
    const LengthStats stats = length_stats(lengths);
    EXPECT_EQ(stats.count, 100u);
    EXPECT_EQ(stats.total_tokens, 5050u);
    EXPECT_DOUBLE_EQ(stats.mean, 50.5);
    EXPECT_EQ(stats.min, 1u);
    EXPECT_EQ(stats.max, 100u);
    EXPECT_EQ(stats.p50, 50u);
    EXPECT_EQ(stats.p90, 90u);
    EXPECT_EQ(stats.p95, 95u);
    EXPECT_EQ(stats.p99, 99u);
    EXPECT_EQ(length_percentile({3, 7}, 0.0), 3u);
    EXPECT_EQ(length_percentile({3, 7}, 51.0), 7u);
}

TEST(LengthStats, EmptyIsAllZero) {
    const LengthStats stats = length_stats({});
    EXPECT_EQ(stats.count, 0u);
    EXPECT_EQ(stats.max, 0u);
    EXPECT_DOUBLE_EQ(stats.mean, 0.0);
}

TEST(LengthStats, CountsTokensOfExamples) {
    const std::vector<Example> examples = {{"Don't panic.", 0}, {"a b", 1}, {"one", 0}};
    const LengthStats stats = token_length_stats(examples);
    EXPECT_EQ(stats.count, 3u);
    EXPECT_EQ(stats.max, 4u);  // do n't panic .
    EXPECT_EQ(stats.min, 1u);
    EXPECT_EQ(stats.total_tokens, 7u);
    EXPECT_EQ(stats.p50, 2u);
}

}  // namespace
}  // namespace oomlab
