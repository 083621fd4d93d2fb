// The GloVe-like tokenizer.
#include <gtest/gtest.h>

#include "oomlab/data/tokenizer.h"

namespace oomlab {
namespace {

using Strings = std::vector<std::string>;

Strings cased(std::string_view text) {
    return tokenize(text, TokenizerOptions{true});
}

TEST(Tokenizer, LowerCasesWordsAndSplitsSigns) {
    EXPECT_EQ(tokenize("Hello, World!"), (Strings{"hello", ",", "world", "!"}));
    EXPECT_EQ(tokenize("(a+b)=c"), (Strings{"(", "a", "+", "b", ")", "=", "c"}));
    EXPECT_EQ(cased("Hello, World!"), (Strings{"Hello", ",", "World", "!"}));
}

TEST(Tokenizer, SplitsCliticsLikeGlove) {
    EXPECT_EQ(tokenize("don't"), (Strings{"do", "n't"}));
    EXPECT_EQ(tokenize("It's"), (Strings{"it", "'s"}));
    EXPECT_EQ(tokenize("can't won't isn't"), (Strings{"ca", "n't", "wo", "n't", "is", "n't"}));
    EXPECT_EQ(tokenize("we'll they're I've I'm she'd"),
              (Strings{"we", "'ll", "they", "'re", "i", "'ve", "i", "'m", "she", "'d"}));
    EXPECT_EQ(cased("DON'T"), (Strings{"DO", "N'T"}));
}

TEST(Tokenizer, KeepsOtherInnerApostrophes) {
    EXPECT_EQ(tokenize("o'clock rock'n'roll"), (Strings{"o'clock", "rock'n'roll"}));
    EXPECT_EQ(tokenize("dogs' 'quoted'"), (Strings{"dogs", "'", "'", "quoted", "'"}));
}

TEST(Tokenizer, PreTokenizedTextKeepsItsTokens) {
    // TREC and SST files are already tokenized the PTB way.
    EXPECT_EQ(tokenize("it 's slow -- very , very slow ."),
              (Strings{"it", "'s", "slow", "--", "very", ",", "very", "slow", "."}));
    EXPECT_EQ(tokenize("do n't"), (Strings{"do", "n't"}));
    EXPECT_EQ(tokenize("`` hi ''"), (Strings{"``", "hi", "''"}));
}

TEST(Tokenizer, NumbersEllipsesAndDashes) {
    EXPECT_EQ(tokenize("1,000 and 3.14."), (Strings{"1,000", "and", "3.14", "."}));
    EXPECT_EQ(tokenize("wait... what"), (Strings{"wait", "...", "what"}));
    EXPECT_EQ(tokenize("a--b - c"), (Strings{"a", "--", "b", "-", "c"}));
    EXPECT_EQ(tokenize("1990s-era"), (Strings{"1990s", "-", "era"}));
}

TEST(Tokenizer, MultibyteCharactersStayWhole) {
    EXPECT_EQ(tokenize("Caf\xC3\xA9 na\xC3\xAFve"), (Strings{"caf\xC3\xA9", "na\xC3\xAFve"}));
    EXPECT_EQ(tokenize("\xE6\x97\xA5\xE6\x9C\xAC"), (Strings{"\xE6\x97\xA5\xE6\x9C\xAC"}));
}

TEST(Tokenizer, UnicodePunctuation) {
    // don’t, “quoted”, an ellipsis and a no-break space.
    EXPECT_EQ(tokenize("don\xE2\x80\x99t"), (Strings{"do", "n't"}));
    EXPECT_EQ(tokenize("\xE2\x80\x9Chi\xE2\x80\x9D"), (Strings{"\"", "hi", "\""}));
    EXPECT_EQ(tokenize("so\xE2\x80\xA6"), (Strings{"so", "..."}));
    EXPECT_EQ(tokenize("a\xC2\xA0"
                       "b"),
              (Strings{"a", "b"}));
    EXPECT_EQ(tokenize("a\xE2\x80\x94"
                       "b"),
              (Strings{"a", "\xE2\x80\x94", "b"}));
}

TEST(Tokenizer, WhitespaceAndControlCharacters) {
    EXPECT_TRUE(tokenize("").empty());
    EXPECT_TRUE(tokenize(" \t\r\n").empty());
    EXPECT_EQ(tokenize("a\tb\r\nc\x01"), (Strings{"a", "b", "c"}));
}

TEST(Tokenizer, ReusesTheOutputVector) {
    std::vector<std::string> out = {"stale"};
    tokenize("fresh start", {}, out);
    EXPECT_EQ(out, (Strings{"fresh", "start"}));
}

}  // namespace
}  // namespace oomlab
