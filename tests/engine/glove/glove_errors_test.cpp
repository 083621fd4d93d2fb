// Malformed text: every error names the file and, where there is one, the line.
#include <gtest/gtest.h>

#include "glove_test_helpers.h"
#include "test_support.h"

namespace oomlab {
namespace {

class GloveErrors : public ::testing::Test {
protected:
    // Writes `content` to a file named `name` and returns load()'s error message.
    std::string error_for(const std::string& name, const std::string& content,
                          const GloveLoadOptions& options = test::no_cache()) {
        const std::string path = m_dir.file(name);
        test::write_file(path, content);
        return test::load_error(path, options);
    }
    std::string where(const std::string& name, int line) const {
        return m_dir.file(name) + ":" + std::to_string(line) + ": ";
    }
    test::TempDir m_dir;
};

TEST_F(GloveErrors, TooFewValuesNamesTheLine) {
    const std::string message =
        error_for("short.txt", "a 1 2 3 4\nb 1 2 3 4\nc 1 2 3\nd 1 2 3 4\n");
    EXPECT_EQ(message.rfind(where("short.txt", 3), 0), 0u) << message;
    EXPECT_NE(message.find("expected a word and 4 values, found 4 fields"), std::string::npos)
        << message;
}

TEST_F(GloveErrors, NonNumericValueNamesLineAndValue) {
    const std::string message = error_for("text.txt", "a 1 2 3 4\nb 1 x7 3 4\n");
    EXPECT_EQ(message.rfind(where("text.txt", 2), 0), 0u) << message;
    EXPECT_NE(message.find("value 2 of 4 'x7' is not a number"), std::string::npos) << message;
}

TEST_F(GloveErrors, NumberWithTrailingGarbageIsRejected) {
    const std::string message = error_for("garbage.txt", "a 1 2\nb 1 2.5abc\n");
    EXPECT_EQ(message.rfind(where("garbage.txt", 2), 0), 0u) << message;
    EXPECT_NE(message.find("'2.5abc' is not a number"), std::string::npos) << message;
}

TEST_F(GloveErrors, NanAndInfinityAreRejected) {
    for (const std::string value : {"nan", "NaN", "inf", "-inf", "infinity"}) {
        const std::string message = error_for("nan.txt", "a 1 2\nb 3 4\nc " + value + " 5\n");
        EXPECT_EQ(message.rfind(where("nan.txt", 3), 0), 0u) << message;
        EXPECT_NE(message.find("value 1 of 2 is '" + value + "'"), std::string::npos) << message;
        EXPECT_NE(message.find("NaN and infinite values are not allowed"), std::string::npos)
            << message;
    }
}

TEST_F(GloveErrors, OverflowingValueIsRejected) {
    const std::string message = error_for("huge.txt", "a 1 2\nb 1e39 5\n");
    EXPECT_EQ(message.rfind(where("huge.txt", 2), 0), 0u) << message;
    EXPECT_NE(message.find("'1e39' does not fit in a float"), std::string::npos) << message;
}

TEST_F(GloveErrors, LineNumbersCountBlankLinesCrlfAndTheHeader) {
    std::string message = error_for("blank.txt", "a 1 2\r\n\r\nb 3 4\r\n\nc 5\r\n");
    EXPECT_EQ(message.rfind(where("blank.txt", 5), 0), 0u) << message;
    message = error_for("w2v.txt", "2 2\na 1 2\nb 3 ?\n");
    EXPECT_EQ(message.rfind(where("w2v.txt", 3), 0), 0u) << message;
}

TEST_F(GloveErrors, LastLineWithoutNewlineIsChecked) {
    const std::string message = error_for("last.txt", "a 1 2\nb 3 4\nc 5");
    EXPECT_EQ(message.rfind(where("last.txt", 3), 0), 0u) << message;
}

TEST_F(GloveErrors, DoubleSpaceInsideTheVectorIsAnError) {
    const std::string message = error_for("spaces.txt", "a 1 2 3\nb 1  3\n");
    EXPECT_EQ(message.rfind(where("spaces.txt", 2), 0), 0u) << message;
}

TEST_F(GloveErrors, EmptyFile) {
    const std::string message = error_for("empty.txt", "");
    EXPECT_EQ(message.rfind(m_dir.file("empty.txt") + ": file is empty", 0), 0u) << message;
    EXPECT_NE(message.find("word v1 ... vD"), std::string::npos) << message;
}

TEST_F(GloveErrors, OnlyBlankLines) {
    const std::string message = error_for("blanks.txt", "\n\r\n  \n");
    EXPECT_NE(message.find("has no vectors"), std::string::npos) << message;
}

TEST_F(GloveErrors, SingleFieldLinesAreNotVectors) {
    const std::string message = error_for("words.txt", "hello\nworld\n");
    EXPECT_EQ(message.rfind(where("words.txt", 1), 0), 0u) << message;
    EXPECT_NE(message.find("single field"), std::string::npos) << message;
}

TEST_F(GloveErrors, Word2VecHeaderDisagreeingWithTheLines) {
    std::string message = error_for("width.txt", "2 4\na 1 2 3\nb 4 5 6\n");
    EXPECT_EQ(message.rfind(where("width.txt", 2), 0), 0u) << message;
    EXPECT_NE(message.find("declares 4 dimensions but the lines have 3"), std::string::npos)
        << message;
    message = error_for("count.txt", "5 2\na 1 2\nb 3 4\n");
    EXPECT_EQ(message.rfind(where("count.txt", 1), 0), 0u) << message;
    EXPECT_NE(message.find("declares 5 words but the file has 2"), std::string::npos) << message;
    message = error_for("header_only.txt", "0 300\n");
    EXPECT_NE(message.find("has no vectors"), std::string::npos) << message;
}

TEST_F(GloveErrors, MissingFile) {
    const std::string path = m_dir.file("absent.txt");
    const std::string message = test::load_error(path);
    EXPECT_EQ(message.rfind(path + ": does not exist (embeddings.path)", 0), 0u) << message;
}

TEST_F(GloveErrors, NegativeMaxRows) {
    GloveLoadOptions options = test::no_cache();
    options.max_rows = -1;
    const std::string message = error_for("ok.txt", "a 1\n", options);
    EXPECT_NE(message.find("max_rows"), std::string::npos) << message;
}

}  // namespace
}  // namespace oomlab
