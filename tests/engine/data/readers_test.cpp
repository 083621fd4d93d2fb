// Each reader returns the texts and labels exactly as the file holds them.
#include <gtest/gtest.h>

#include "data_test_helpers.h"

namespace oomlab {
namespace {

using test::dataset_fixture;
using test::labels_of;
using test::texts_of;
using Strings = std::vector<std::string>;

TEST(Readers, Sst2TsvWithHeaderIsTextThenLabel) {
    DatasetFormat detected = DatasetFormat::Auto;
    const auto examples =
        read_raw_examples(dataset_fixture("sst2_dev.tsv"), DatasetFormat::Auto, &detected);
    EXPECT_EQ(detected, DatasetFormat::TextTabLabel);
    ASSERT_EQ(examples.size(), 5u);
    EXPECT_EQ(examples[0].text, "it 's a charming and often affecting journey .");
    EXPECT_EQ(examples[4].text, "it 's slow -- very , very slow .");
    EXPECT_EQ(labels_of(examples), (Strings{"1", "0", "1", "1", "0"}));
}

TEST(Readers, TextTabLabelWithoutHeader) {
    const auto examples = read_raw_examples(dataset_fixture("text_label.tsv"), DatasetFormat::Auto);
    ASSERT_EQ(examples.size(), 4u);
    EXPECT_EQ(examples[2].text, "a dull , simple-minded and stereotypical tale");
    EXPECT_EQ(labels_of(examples), (Strings{"positive", "positive", "negative", "negative"}));
}

TEST(Readers, LabelTabTextWithBomCrlfBlankLineAndNoFinalNewline) {
    DatasetFormat detected = DatasetFormat::Auto;
    const auto examples =
        read_raw_examples(dataset_fixture("sms_style.tsv"), DatasetFormat::Auto, &detected);
    EXPECT_EQ(detected, DatasetFormat::LabelTabText);
    EXPECT_EQ(labels_of(examples), (Strings{"ham", "spam", "ham", "ham"}));
    EXPECT_EQ(texts_of(examples),
              (Strings{"Go until jurong point, crazy.. Available only in bugis",
                       "Free entry in 2 a wkly comp to win FA Cup final tkts 21st May 2005. "
                       "\"Text\" FA to 87121",
                       "Ok lar... Joking wif u oni...",
                       "U dun say so early hor... U c already then say..."}));
}

TEST(Readers, LabelSpaceText) {
    DatasetFormat detected = DatasetFormat::Auto;
    const auto examples =
        read_raw_examples(dataset_fixture("trec_style.txt"), DatasetFormat::Auto, &detected);
    EXPECT_EQ(detected, DatasetFormat::LabelSpaceText);
    ASSERT_EQ(examples.size(), 6u);
    EXPECT_EQ(examples[0].label, "10");
    EXPECT_EQ(examples[0].text, "How far is it from Denver to Aspen ?");
    EXPECT_EQ(examples[5].label, "1");
    EXPECT_EQ(examples[5].text, "How tall is the Sears Building ?");
}

TEST(Readers, AgNewsCsvJoinsTitleAndDescriptionKeepingQuotesAndBackslashes) {
    DatasetFormat detected = DatasetFormat::Auto;
    const auto examples =
        read_raw_examples(dataset_fixture("ag_news_style.csv"), DatasetFormat::Auto, &detected);
    EXPECT_EQ(detected, DatasetFormat::Csv);
    EXPECT_EQ(labels_of(examples), (Strings{"3", "4", "2", "1"}));
    EXPECT_EQ(examples[0].text,
              "Wall St. Bears Claw Back Into the Black (Reuters) Reuters - Short-sellers, Wall "
              "Street's dwindling\\band of \"ultra-cynics\", are seeing green again.");
    EXPECT_EQ(examples[1].text,
              "Stocks End Up, But Near Year Lows NEW YORK - Stocks edged higher\non Monday.");
    EXPECT_EQ(examples[2].text,
              "Phelps Wins Again ATHENS - Michael Phelps won his fourth gold, \\$415 bonus.");
}

TEST(Readers, CsvHeaderNamesTheLabelColumn) {
    const auto examples =
        read_raw_examples(dataset_fixture("text_label_header.csv"), DatasetFormat::Auto);
    EXPECT_EQ(texts_of(examples),
              (Strings{"the food was great", "cold soup and a rude waiter", "fine, if pricey"}));
    EXPECT_EQ(labels_of(examples), (Strings{"good", "bad", "good"}));
}

TEST(Readers, FastTextTakesTheFirstOfSeveralLabels) {
    DatasetFormat detected = DatasetFormat::Auto;
    const auto examples =
        read_raw_examples(dataset_fixture("cooking.fasttext.txt"), DatasetFormat::Auto, &detected);
    EXPECT_EQ(detected, DatasetFormat::FastText);
    EXPECT_EQ(labels_of(examples), (Strings{"sauce", "food-safety", "cast-iron", "sauce"}));
    EXPECT_EQ(examples[0].text, "How much does potato starch affect a cheese sauce recipe?");
    EXPECT_EQ(examples[3].text, "What kind of sauce goes with duck?");
}

TEST(Readers, JsonLinesWithIntegerAndStringLabels) {
    DatasetFormat detected = DatasetFormat::Auto;
    const auto examples =
        read_raw_examples(dataset_fixture("reviews.jsonl"), DatasetFormat::Auto, &detected);
    EXPECT_EQ(detected, DatasetFormat::JsonLines);
    EXPECT_EQ(texts_of(examples), (Strings{"A caf\xC3\xA9 worth the trip.", "Never again.",
                                           "Lovely staff", "Too loud"}));
    EXPECT_EQ(labels_of(examples), (Strings{"1", "0", "1", "0"}));
}

TEST(Readers, FolderPerClassInSortedOrder) {
    DatasetFormat detected = DatasetFormat::Auto;
    const auto examples =
        read_raw_examples(dataset_fixture("imdb_style/train"), DatasetFormat::Auto, &detected);
    EXPECT_EQ(detected, DatasetFormat::Folder);
    EXPECT_EQ(labels_of(examples), (Strings{"neg", "pos", "pos"}));
    EXPECT_EQ(texts_of(examples),
              (Strings{"Story of a man who has unnatural feelings for a pig.",
                       "I loved it.<br />Really.", "Bromwell High is a cartoon comedy."}));
}

TEST(Readers, ExplicitFormatOverridesDetection) {
    // Read as "label text", the SMS file's first word (up to the tab) is the label.
    const auto examples =
        read_raw_examples(dataset_fixture("sms_style.tsv"), DatasetFormat::LabelSpaceText);
    ASSERT_EQ(examples.size(), 4u);
    EXPECT_EQ(examples[1].label, "spam");
}

TEST(Readers, FormatNamesRoundTrip) {
    for (const DatasetFormat format :
         {DatasetFormat::Auto, DatasetFormat::LabelTabText, DatasetFormat::TextTabLabel,
          DatasetFormat::LabelSpaceText, DatasetFormat::Csv, DatasetFormat::FastText,
          DatasetFormat::Folder, DatasetFormat::JsonLines, DatasetFormat::Fortunes}) {
        const std::string name(dataset_format_name(format));
        EXPECT_EQ(parse_dataset_format(name), format) << name;
        EXPECT_NE(dataset_format_names().find(name), std::string::npos) << name;
    }
    EXPECT_EQ(parse_dataset_format("TSV"), DatasetFormat::LabelTabText);
    EXPECT_EQ(parse_dataset_format("ndjson"), DatasetFormat::JsonLines);
    EXPECT_FALSE(parse_dataset_format("xml").has_value());
}

}  // namespace
}  // namespace oomlab
