// Label mapping, the seeded split and validation files.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "data_test_helpers.h"

namespace oomlab {
namespace {

using test::dataset_fixture;
using Strings = std::vector<std::string>;

std::vector<std::int32_t> labels_of(const Dataset& dataset) {
    std::vector<std::int32_t> labels;
    for (const Example& example : dataset.examples) {
        labels.push_back(example.label);
    }
    return labels;
}

DatasetSpec spec_for(const std::string& path, double valid_ratio, std::uint64_t seed = 0) {
    DatasetSpec spec;
    spec.path = path;
    spec.valid_ratio = valid_ratio;
    spec.seed = seed;
    return spec;
}

TEST(Loading, IntegerLabelsMapInNumericOrder) {
    const DatasetSplit split = load_dataset(spec_for(dataset_fixture("trec_style.txt"), 0.0));
    EXPECT_EQ(split.train.label_names, (Strings{"1", "2", "10"}));
    EXPECT_EQ(labels_of(split.train), (std::vector<std::int32_t>{2, 1, 0, 2, 1, 0}));
    EXPECT_EQ(split.train.format, DatasetFormat::LabelSpaceText);
    EXPECT_EQ(split.train.source, dataset_fixture("trec_style.txt"));
    EXPECT_TRUE(split.valid.examples.empty());
    EXPECT_EQ(split.valid.label_names, split.train.label_names);
}

TEST(Loading, NamedLabelsMapInSortedOrder) {
    const DatasetSplit split = load_dataset(spec_for(dataset_fixture("cooking.fasttext.txt"), 0.0));
    EXPECT_EQ(split.train.label_names, (Strings{"cast-iron", "food-safety", "sauce"}));
    EXPECT_EQ(labels_of(split.train), (std::vector<std::int32_t>{2, 1, 0, 2}));
}

TEST(Loading, IntegerAndStringSpellingsOfOneLabelAreOneClass) {
    const DatasetSplit split = load_dataset(spec_for(dataset_fixture("reviews.jsonl"), 0.0));
    EXPECT_EQ(split.train.label_names, (Strings{"0", "1"}));
    EXPECT_EQ(labels_of(split.train), (std::vector<std::int32_t>{1, 0, 1, 0}));
}

TEST(Loading, ValidationFileSharesTrainingIds) {
    DatasetSpec spec = spec_for(dataset_fixture("imdb_style/train"), 0.5);
    test::TempDir dir;
    std::filesystem::create_directories(dir.path() + "/pos");
    test::write_file(dir.path() + "/pos/x.txt", "Great.");
    spec.valid_path = dir.path();
    const DatasetSplit split = load_dataset(spec);
    EXPECT_EQ(split.train.examples.size(), 3u);  // the ratio is unused when valid data is given
    EXPECT_EQ(split.train.label_names, (Strings{"neg", "pos"}));
    ASSERT_EQ(split.valid.examples.size(), 1u);
    EXPECT_EQ(split.valid.examples[0].label, 1);
    EXPECT_EQ(split.valid.examples[0].text, "Great.");
    EXPECT_EQ(split.valid.label_names, split.train.label_names);
    EXPECT_EQ(split.valid.source, dir.path());
    EXPECT_EQ(split.valid.format, DatasetFormat::Folder);
}

TEST(Loading, ValidationLabelUnseenInTrainingNamesTheFile) {
    DatasetSpec spec = spec_for(dataset_fixture("trec_style.txt"), 0.1);
    spec.valid_path = dataset_fixture("trec_style.valid.txt");
    const std::string message = test::bad_input_message([&] { load_dataset(spec); });
    EXPECT_EQ(message.rfind(spec.valid_path + ": ", 0), 0u) << message;
    EXPECT_NE(message.find("\"7\""), std::string::npos) << message;
    EXPECT_NE(message.find(spec.path), std::string::npos) << message;
}

TEST(Loading, FolderValidationWithAnExtraClassIsRejected) {
    DatasetSpec spec = spec_for(dataset_fixture("imdb_style/train"), 0.0);
    spec.valid_path = dataset_fixture("imdb_style/test");
    const std::string message = test::bad_input_message([&] { load_dataset(spec); });
    EXPECT_NE(message.find("\"other\""), std::string::npos) << message;
}

TEST(Loading, SeededSplitIsDeterministicAndSized) {
    test::TempDir dir;
    std::string content;
    for (int i = 0; i < 100; ++i) {
        content += std::to_string(i % 3) + " example number " + std::to_string(i) + "\n";
    }
    test::write_file(dir.file("hundred.txt"), content);
    const DatasetSplit a = load_dataset(spec_for(dir.file("hundred.txt"), 0.2, 7));
    const DatasetSplit b = load_dataset(spec_for(dir.file("hundred.txt"), 0.2, 7));
    const DatasetSplit c = load_dataset(spec_for(dir.file("hundred.txt"), 0.2, 8));
    ASSERT_EQ(a.train.examples.size(), 80u);
    ASSERT_EQ(a.valid.examples.size(), 20u);
    const auto texts = [](const Dataset& d) {
        std::vector<std::string> result;
        for (const Example& e : d.examples) {
            result.push_back(e.text);
        }
        return result;
    };
    EXPECT_EQ(texts(a.valid), texts(b.valid));
    EXPECT_EQ(texts(a.train), texts(b.train));
    EXPECT_NE(texts(a.valid), texts(c.valid));
    // Train and valid partition the file, each in file order.
    const std::vector<std::string> train_texts = texts(a.train);
    std::set<std::string> all(train_texts.begin(), train_texts.end());
    for (const std::string& text : texts(a.valid)) {
        EXPECT_TRUE(all.insert(text).second) << text << " is in both parts";
    }
    EXPECT_EQ(all.size(), 100u);
    const auto in_file_order = [](const Dataset& d) {
        return std::is_sorted(
            d.examples.begin(), d.examples.end(), [](const Example& x, const Example& y) {
                return std::stoi(x.text.substr(15)) < std::stoi(y.text.substr(15));
            });
    };
    EXPECT_TRUE(in_file_order(a.train));
    EXPECT_TRUE(in_file_order(a.valid));
    // Labels follow their examples: "i % 3 ... number i".
    for (const Example& example : a.valid.examples) {
        EXPECT_EQ(example.label, std::stoi(example.text.substr(15)) % 3) << example.text;
    }
}

TEST(Loading, SplitSizesRoundAndKeepBothPartsNonEmpty) {
    const std::string path = dataset_fixture("trec_style.txt");  // 6 examples
    EXPECT_EQ(load_dataset(spec_for(path, 0.5)).valid.examples.size(), 3u);
    EXPECT_EQ(load_dataset(spec_for(path, 0.01)).valid.examples.size(), 1u);
    EXPECT_EQ(load_dataset(spec_for(path, 0.99)).train.examples.size(), 1u);
    EXPECT_EQ(load_dataset(spec_for(path, 0.0)).train.examples.size(), 6u);
}

TEST(Loading, RatioOutsideZeroToOneIsBadInput) {
    for (const double ratio : {-0.1, 1.0, 1.5}) {
        const std::string message = test::bad_input_message(
            [&] { load_dataset(spec_for(dataset_fixture("trec_style.txt"), ratio)); });
        EXPECT_NE(message.find("dataset.valid_ratio"), std::string::npos) << message;
    }
}

TEST(Loading, SingleLabelIsBadInput) {
    const std::string path = dataset_fixture("bad/single_label.tsv");
    const std::string message = test::bad_input_message([&] { load_dataset(spec_for(path, 0.0)); });
    EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
    EXPECT_NE(message.find("at least two"), std::string::npos) << message;
}

}  // namespace
}  // namespace oomlab
