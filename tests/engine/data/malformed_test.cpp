// Malformed files: BadInput naming file:line and saying what to do.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "data_test_helpers.h"

namespace oomlab {
namespace {

using test::dataset_fixture;

struct MalformedCase {
    const char* file;
    DatasetFormat format;
    std::size_t line;  // 0: the message names the file without a line
    const char* says;
};

class Malformed : public testing::TestWithParam<MalformedCase> {};

TEST_P(Malformed, MessageNamesFileLineAndTheProblem) {
    const MalformedCase& c = GetParam();
    const std::string path = dataset_fixture(c.file);
    const std::string message = test::bad_input_message([&] { read_raw_examples(path, c.format); });
    const std::string where =
        c.line == 0 ? path + ": " : path + ":" + std::to_string(c.line) + ": ";
    EXPECT_EQ(message.rfind(where, 0), 0u) << message;
    EXPECT_NE(message.find(c.says), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(
    Files, Malformed,
    testing::Values(
        MalformedCase{"bad/empty.tsv", DatasetFormat::Auto, 0, "holds no examples"},
        MalformedCase{"bad/empty.tsv", DatasetFormat::LabelTabText, 0, "holds no examples"},
        MalformedCase{"bad/blank_lines.txt", DatasetFormat::LabelSpaceText, 0, "holds no examples"},
        MalformedCase{"bad/header_only.tsv", DatasetFormat::Auto, 0, "after the header"},
        MalformedCase{"bad/no_tab.tsv", DatasetFormat::Auto, 3, "no tab"},
        MalformedCase{"bad/empty_text.tsv", DatasetFormat::LabelTabText, 2, "text is empty"},
        MalformedCase{"bad/no_text.txt", DatasetFormat::LabelSpaceText, 3, "text is empty"},
        MalformedCase{"bad/unclosed_quote.csv", DatasetFormat::Auto, 2, "never closed"},
        MalformedCase{"bad/after_quote.csv", DatasetFormat::Csv, 2, "after a closing quote"},
        MalformedCase{"bad/one_column.csv", DatasetFormat::Csv, 2, "text column"},
        MalformedCase{"bad/not_fasttext.txt", DatasetFormat::Auto, 2, "__label__"},
        MalformedCase{"bad/syntax.jsonl", DatasetFormat::Auto, 2, "not valid JSON"},
        MalformedCase{"bad/missing_label.jsonl", DatasetFormat::Auto, 3, "\"label\""},
        MalformedCase{"bad/float_label.jsonl", DatasetFormat::Auto, 1, "string or an integer"},
        MalformedCase{"bad/prose.txt", DatasetFormat::Auto, 0, "dataset.format"},
        MalformedCase{"bad/folder_without_classes", DatasetFormat::Auto, 0,
                      "one sub-folder per class"},
        MalformedCase{"sms_style.tsv", DatasetFormat::Folder, 0, "is a file"},
        MalformedCase{"imdb_style/train", DatasetFormat::Csv, 0, "is a folder"},
        MalformedCase{"does_not_exist.tsv", DatasetFormat::Auto, 0, "does not exist"}));

TEST(Malformed, JsonNumberBeyondDoubleRangeNamesTheLine) {
    // Regression: found by fuzz_dataset; nlohmann throws out_of_range, not parse_error.
    test::TempDir dir;
    const std::string path = dir.file("big.jsonl");
    test::write_file(path,
                     "{\"text\": \"fine\", \"label\": 1}\n{\"text\": \"x\", \"label\": 5E655}\n");
    const std::string message =
        test::bad_input_message([&] { read_raw_examples(path, DatasetFormat::JsonLines); });
    EXPECT_NE(message.find(path + ":2"), std::string::npos) << message;
}

TEST(Malformed, EmptyFileInAClassFolderNamesThatFile) {
    test::TempDir dir;
    std::filesystem::create_directories(dir.path() + "/pos");
    test::write_file(dir.path() + "/pos/a.txt", "good");
    test::write_file(dir.path() + "/pos/b.txt", " \n");
    const std::string message =
        test::bad_input_message([&] { read_raw_examples(dir.path(), DatasetFormat::Auto); });
    EXPECT_EQ(message.rfind(dir.path() + "/pos/b.txt: ", 0), 0u) << message;
    EXPECT_NE(message.find("empty"), std::string::npos) << message;
}

TEST(Malformed, UnreadableFileIsBadInput) {
    test::TempDir dir;
    const std::string path = dir.file("locked.tsv");
    test::write_file(path, "ham\thello\n");
    std::filesystem::permissions(path, std::filesystem::perms::none);
    if (std::ifstream(path).good()) {
        GTEST_SKIP() << "running with permissions that read any file (root)";
    }
    const std::string message =
        test::bad_input_message([&] { read_raw_examples(path, DatasetFormat::Auto); });
    EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
}

}  // namespace
}  // namespace oomlab
