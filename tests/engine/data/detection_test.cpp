// Format detection from content, extension and layout.
#include <gtest/gtest.h>

#include "data_test_helpers.h"

namespace oomlab {
namespace {

using test::dataset_fixture;
using test::TempDir;
using test::write_file;

TEST(Detection, EachFixtureFormat) {
    EXPECT_EQ(detect_dataset_format(dataset_fixture("sst2_dev.tsv")), DatasetFormat::TextTabLabel);
    EXPECT_EQ(detect_dataset_format(dataset_fixture("text_label.tsv")),
              DatasetFormat::TextTabLabel);
    EXPECT_EQ(detect_dataset_format(dataset_fixture("sms_style.tsv")), DatasetFormat::LabelTabText);
    EXPECT_EQ(detect_dataset_format(dataset_fixture("trec_style.txt")),
              DatasetFormat::LabelSpaceText);
    EXPECT_EQ(detect_dataset_format(dataset_fixture("ag_news_style.csv")), DatasetFormat::Csv);
    EXPECT_EQ(detect_dataset_format(dataset_fixture("cooking.fasttext.txt")),
              DatasetFormat::FastText);
    EXPECT_EQ(detect_dataset_format(dataset_fixture("reviews.jsonl")), DatasetFormat::JsonLines);
    EXPECT_EQ(detect_dataset_format(dataset_fixture("imdb_style/train")), DatasetFormat::Folder);
    EXPECT_EQ(detect_dataset_format(""), DatasetFormat::Fortunes);
}

TEST(Detection, ContentDecidesWhenTheExtensionSaysNothing) {
    TempDir dir;
    write_file(dir.file("a.data"), "\n  {\"text\": \"hi\", \"label\": 1}\n");
    write_file(dir.file("b.data"), "\"1\",\"title\",\"body\"\n");
    write_file(dir.file("c.data"), "\"1\",\"a title\nover two lines\",\"body\"\n");
    write_file(dir.file("d.data"), "__label__x hello\n");
    write_file(dir.file("e.data"), "pos good film\nneg bad film\npos great film\nneg awful\n");
    write_file(dir.file("f.data"),
               "a long text here\tspam\nanother long text\tham\nmore text\tham\n");
    EXPECT_EQ(detect_dataset_format(dir.file("a.data")), DatasetFormat::JsonLines);
    EXPECT_EQ(detect_dataset_format(dir.file("b.data")), DatasetFormat::Csv);
    EXPECT_EQ(detect_dataset_format(dir.file("c.data")), DatasetFormat::Csv);
    EXPECT_EQ(detect_dataset_format(dir.file("d.data")), DatasetFormat::FastText);
    EXPECT_EQ(detect_dataset_format(dir.file("e.data")), DatasetFormat::LabelSpaceText);
    EXPECT_EQ(detect_dataset_format(dir.file("f.data")), DatasetFormat::TextTabLabel);
}

TEST(Detection, TabColumnWithFewerDistinctShortValuesIsTheLabel) {
    TempDir dir;
    // Both columns are single words: the one with fewer distinct values is the label.
    write_file(dir.file("words.tsv"),
               "apple\tfruit\ncarrot\tvegetable\npear\tfruit\nleek\tvegetable\n");
    write_file(dir.file("ids.tsv"), "x\talpha\nx\tbeta\ny\tgamma\n");
    EXPECT_EQ(detect_dataset_format(dir.file("words.tsv")), DatasetFormat::TextTabLabel);
    EXPECT_EQ(detect_dataset_format(dir.file("ids.tsv")), DatasetFormat::LabelTabText);
}

TEST(Detection, LargeFileIsSniffedFromItsFirstLines) {
    TempDir dir;
    std::string content;
    for (int i = 0; content.size() < 3 * 1024 * 1024 / 2; ++i) {
        content += std::to_string(i % 2) + " a line of text that repeats to make the file big " +
                   std::to_string(i) + "\n";
    }
    write_file(dir.file("big.txt"), content);
    EXPECT_EQ(detect_dataset_format(dir.file("big.txt")), DatasetFormat::LabelSpaceText);
}

TEST(Detection, NothingFitsListsTheFormatsAndTheKey) {
    const std::string path = dataset_fixture("bad/prose.txt");
    const std::string message = test::bad_input_message([&] { detect_dataset_format(path); });
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find("dataset.format"), std::string::npos) << message;
    EXPECT_NE(message.find("fasttext"), std::string::npos) << message;
    EXPECT_NE(message.find("label-space-text"), std::string::npos) << message;
}

TEST(Detection, MissingPathIsBadInput) {
    const std::string message =
        test::bad_input_message([] { detect_dataset_format("/nonexistent/oomlab/data.tsv"); });
    EXPECT_NE(message.find("/nonexistent/oomlab/data.tsv"), std::string::npos) << message;
    EXPECT_NE(message.find("dataset.path"), std::string::npos) << message;
}

}  // namespace
}  // namespace oomlab
