// The real public datasets in ../shared/data (skipped when that folder is absent).
#include <gtest/gtest.h>

#include <map>

#include "data_test_helpers.h"
#include "oomlab/data/length_stats.h"

namespace oomlab {
namespace {

using Strings = std::vector<std::string>;

std::string shared(const std::string& name) {
    return test::shared_data_dir() + "/" + name;
}

std::map<std::string, std::size_t> label_counts(const std::vector<RawExample>& examples) {
    std::map<std::string, std::size_t> counts;
    for (const RawExample& example : examples) {
        ++counts[example.label];
    }
    return counts;
}

TEST(SharedData, TrecTrain) {
    OOMLAB_REQUIRE_SHARED_DATA("trec.train.txt");
    DatasetFormat detected = DatasetFormat::Auto;
    const auto examples =
        read_raw_examples(shared("trec.train.txt"), DatasetFormat::Auto, &detected);
    EXPECT_EQ(detected, DatasetFormat::LabelSpaceText);
    ASSERT_EQ(examples.size(), 5452u);
    EXPECT_EQ(examples[0].label, "0");
    EXPECT_EQ(examples[0].text, "How did serfdom develop in and then leave Russia ?");
    const std::map<std::string, std::size_t> expected = {{"0", 1162}, {"1", 1250}, {"2", 86},
                                                         {"3", 1223}, {"4", 835},  {"5", 896}};
    EXPECT_EQ(label_counts(examples), expected);

    DatasetSpec spec;
    spec.path = shared("trec.train.txt");
    spec.valid_ratio = 0.1;
    spec.seed = 42;
    const DatasetSplit split = load_dataset(spec);
    EXPECT_EQ(split.train.label_names, (Strings{"0", "1", "2", "3", "4", "5"}));
    EXPECT_EQ(split.valid.examples.size(), 545u);
    EXPECT_EQ(split.train.examples.size(), 5452u - 545u);

    const LengthStats stats = token_length_stats(split.train.examples);
    EXPECT_GT(stats.mean, 5.0);
    EXPECT_LT(stats.mean, 20.0);
    EXPECT_LE(stats.p50, stats.p90);
    EXPECT_LE(stats.p99, stats.max);
}

TEST(SharedData, TrecTestUsesTrainingIds) {
    OOMLAB_REQUIRE_SHARED_DATA("trec.test.txt");
    DatasetSpec spec;
    spec.path = shared("trec.train.txt");
    spec.valid_path = shared("trec.test.txt");
    const DatasetSplit split = load_dataset(spec);
    EXPECT_EQ(split.train.examples.size(), 5452u);
    EXPECT_EQ(split.valid.examples.size(), 500u);
}

TEST(SharedData, SmsSpam) {
    OOMLAB_REQUIRE_SHARED_DATA("sms_spam.tsv");
    DatasetFormat detected = DatasetFormat::Auto;
    const auto examples = read_raw_examples(shared("sms_spam.tsv"), DatasetFormat::Auto, &detected);
    EXPECT_EQ(detected, DatasetFormat::LabelTabText);
    ASSERT_EQ(examples.size(), 5574u);
    EXPECT_EQ(examples[1].text, "Ok lar... Joking wif u oni...");  // CRLF stripped
    const std::map<std::string, std::size_t> expected = {{"ham", 4827}, {"spam", 747}};
    EXPECT_EQ(label_counts(examples), expected);
}

TEST(SharedData, AgNewsTest) {
    OOMLAB_REQUIRE_SHARED_DATA("ag_news.test.csv");
    DatasetFormat detected = DatasetFormat::Auto;
    const auto examples =
        read_raw_examples(shared("ag_news.test.csv"), DatasetFormat::Auto, &detected);
    EXPECT_EQ(detected, DatasetFormat::Csv);
    ASSERT_EQ(examples.size(), 7600u);
    EXPECT_EQ(examples[0].label, "3");
    EXPECT_EQ(examples[0].text,
              "Fears for T N pension after talks Unions representing workers at Turner   Newall "
              "say they are 'disappointed' after talks with stricken parent firm Federal Mogul.");
    EXPECT_NE(examples[1].text.find("A second\\team of rocketeers"), std::string::npos);
    EXPECT_EQ(examples.back().text.rfind("EBay gets into rentals EBay plans", 0), 0u);
    EXPECT_NE(examples.back().text.find("\\$415 million"), std::string::npos);
    const std::map<std::string, std::size_t> expected = {
        {"1", 1900}, {"2", 1900}, {"3", 1900}, {"4", 1900}};
    EXPECT_EQ(label_counts(examples), expected);
}

}  // namespace
}  // namespace oomlab
