#include <gtest/gtest.h>

#include <stdexcept>

#include "oomlab/data/vocabulary.h"

namespace oomlab {
namespace {

TEST(Vocabulary, StartsWithPaddingAndUnknown) {
    const Vocabulary vocabulary;
    EXPECT_EQ(vocabulary.size(), 2);
    EXPECT_EQ(vocabulary.word(Vocabulary::kPad), "<pad>");
    EXPECT_EQ(vocabulary.word(Vocabulary::kUnknown), "<unk>");
    EXPECT_EQ(vocabulary.id("anything"), Vocabulary::kUnknown);
    EXPECT_FALSE(vocabulary.contains("anything"));
}

TEST(Vocabulary, AddsWordsOnceFromIdTwo) {
    Vocabulary vocabulary;
    EXPECT_EQ(vocabulary.add("the"), 2);
    EXPECT_EQ(vocabulary.add("cat"), 3);
    EXPECT_EQ(vocabulary.add("the"), 2);
    EXPECT_EQ(vocabulary.size(), 4);
    EXPECT_EQ(vocabulary.id("cat"), 3);
    EXPECT_TRUE(vocabulary.contains("cat"));
    EXPECT_EQ(vocabulary.word(3), "cat");
    EXPECT_THROW(vocabulary.word(4), std::out_of_range);
}

}  // namespace
}  // namespace oomlab
