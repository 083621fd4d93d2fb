// The dataset read once for a run's prediction and its training: given again while its files
// and settings are unchanged, read again as soon as either changes.
#include "oomlab/prepare/tokenized_data.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "test_support.h"

namespace oomlab {
namespace {

class TokenizedDataTest : public ::testing::Test {
protected:
    void SetUp() override { prepare::release_kept_data(); }
    void TearDown() override { prepare::release_kept_data(); }

    test::TempDir m_dir;
};

TEST_F(TokenizedDataTest, AnUnchangedFileIsReadOnce) {
    ExperimentConfig config;
    config.dataset.path = m_dir.file("train.txt");
    config.dataset.valid_ratio = 0;
    test::write_file(config.dataset.path, "1 Who wrote Hamlet ?\n2 Where is Rome ?\n");
    const auto first = prepare::load_tokenized_data(config);
    EXPECT_EQ(prepare::load_tokenized_data(config), first);
    EXPECT_EQ(first->train_words,
              (std::vector<std::string>{"who", "wrote", "hamlet", "?", "where", "is", "rome"}));

    // Another setting the read depends on.
    config.train.seed += 1;
    EXPECT_NE(prepare::load_tokenized_data(config), first);

    // The file written again, to the same size: its words are read.
    test::write_file(config.dataset.path, "1 Who wrote Hamlet ?\n2 Where is Oslo ?\n");
    const auto rewritten = prepare::load_tokenized_data(config);
    EXPECT_EQ(rewritten->train_words.back(), "oslo");

    // Another file put in its place.
    const std::string other = m_dir.file("other.txt");
    test::write_file(other, "1 Who wrote Faust ?\n2 Where is Oslo ?\n");
    std::filesystem::rename(other, config.dataset.path);
    EXPECT_EQ(prepare::load_tokenized_data(config)->train_words.at(2), "faust");

    // Once training has encoded the examples, nothing is kept.
    const auto kept = prepare::load_tokenized_data(config);
    prepare::release_kept_data();
    EXPECT_NE(prepare::load_tokenized_data(config), kept);
}

TEST_F(TokenizedDataTest, TheDefaultDatasetIsKeptAndAFolderNever) {
    const ExperimentConfig defaults;
    const auto fortunes = prepare::load_tokenized_data(defaults);
    EXPECT_EQ(prepare::load_tokenized_data(defaults), fortunes);

    // A file of a folder can change while the folder's own times do not.
    ExperimentConfig folder;
    folder.dataset.path = test::fixture("datasets/imdb_style/train");
    const auto read = prepare::load_tokenized_data(folder);
    EXPECT_NE(prepare::load_tokenized_data(folder), read);
}

}  // namespace
}  // namespace oomlab
