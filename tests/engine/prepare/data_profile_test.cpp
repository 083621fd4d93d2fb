// The data's shape as preparation reads it for the estimator, without tensors: examples,
// classes, lengths after max_len, and how many of the dataset's words the vectors hold.
#include "oomlab/prepare/data_profile.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "oomlab/common/errors.h"
#include "oomlab/data/tokenizer.h"
#include "test_support.h"

namespace oomlab {
namespace {

// Six TREC-style questions of three labels, two more to validate on, and 7 lines of GloVe.
class DataProfileTest : public ::testing::Test {
protected:
    ExperimentConfig trec_with_glove_sample() {
        test::write_file(m_dir.file("valid.txt"), "1 Who wrote Hamlet ?\n2 Where is Rome ?\n");
        ExperimentConfig config;
        config.dataset.path = test::fixture("datasets/trec_style.txt");
        config.dataset.valid_path = m_dir.file("valid.txt");
        config.embeddings.source = EmbeddingSource::File;
        // A copy: reading a GloVe file writes its cache beside it.
        config.embeddings.path = m_dir.file("glove.txt");
        std::filesystem::copy_file(test::fixture("glove/glove_6b_50d_sample.txt"),
                                   config.embeddings.path,
                                   std::filesystem::copy_options::overwrite_existing);
        return config;
    }

private:
    test::TempDir m_dir;
};

TEST_F(DataProfileTest, ReadsExamplesClassesAndLengthsAsTrainingWill) {
    ExperimentConfig config = trec_with_glove_sample();
    DataProfile profile = profile_data(config);
    EXPECT_EQ(profile.train_examples, 6);
    EXPECT_EQ(profile.valid_examples, 2);
    EXPECT_EQ(profile.num_classes, 3);  // labels 10, 2 and 1
    // "How far is it from Denver to Aspen ?" is the longest, at 9 tokens.
    std::vector<int> lengths = profile.lengths;
    std::sort(lengths.begin(), lengths.end());
    EXPECT_EQ(lengths, (std::vector<int>{4, 5, 7, 7, 8, 9}));
    EXPECT_EQ(profile.longest, 9);
    EXPECT_DOUBLE_EQ(profile.mean_length, 40.0 / 6);

    config.train.max_len = 6;  // cut as the encoder cuts
    profile = profile_data(config);
    EXPECT_EQ(profile.longest, 6);
    EXPECT_DOUBLE_EQ(profile.mean_length, (4 + 5 + 4 * 6) / 6.0);
}

TEST_F(DataProfileTest, CountsTheDatasetsWordsAndThoseTheVectorsHold) {
    const ExperimentConfig config = trec_with_glove_sample();
    const DataProfile profile = profile_data(config);
    std::set<std::string> words;
    for (const char* text :
         {"How far is it from Denver to Aspen ?", "What county is Modesto , California in ?",
          "Who was Galileo ?", "What is an atom ?", "When did Hawaii become a state ?",
          "How tall is the Sears Building ?"}) {
        for (const std::string& token : tokenize(text)) {
            words.insert(token);
        }
    }
    EXPECT_EQ(profile.dataset_words, std::int64_t(words.size()));
    EXPECT_EQ(profile.vector_rows, 7);  // the sample's lines
    EXPECT_EQ(profile.embedding_dim, 50);
    EXPECT_EQ(profile.words_with_vector, 2) << "of the sample's words, only \"the\" and \",\"";
    EXPECT_FALSE(profile.synthetic_vectors);
    EXPECT_EQ(profile.vocab_rows, profile.dataset_words + 2) << "vocab=dataset, <pad> and <unk>";
}

TEST(DataProfile, TokensThatAreNotThereStillTakeOnePosition) {
    ExperimentConfig config;
    config.train.max_len = 4;
    const DataProfile profile =
        profile_tokens(config, 3, 1, 2, {{"a", "b"}, {}, {"a", "b", "c", "d", "e", "f"}});
    EXPECT_EQ(profile.lengths, (std::vector<int>{2, 1, 4}));  // an empty text is one <unk>
    EXPECT_EQ(profile.longest, 4);
    EXPECT_DOUBLE_EQ(profile.mean_length, 7.0 / 3);
    EXPECT_EQ(profile.vocab_rows, 0) << "the vectors' part is the caller's";
    EXPECT_TRUE(profile.valid_lengths.empty());
    // The validation examples' lengths, cut alike: evaluation's batches are known too.
    const DataProfile with_valid = profile_tokens(config, 1, 2, 2, {{"a"}}, {{"a", "b", "c"}, {}});
    EXPECT_EQ(with_valid.valid_lengths, (std::vector<int>{3, 1}));
    EXPECT_EQ(with_valid.longest, 1) << "the training data's alone";
}

TEST(DataProfile, StepsPerEpochCountFullMicroBatchesOnEachOfSeveralRanks) {
    EXPECT_EQ(steps_per_epoch(10, 4, 1), 3);  // 4 + 4 + 2
    EXPECT_EQ(steps_per_epoch(10, 4, 2), 2);  // 3 micro-batches, the last step has one
    EXPECT_EQ(steps_per_epoch(10, 4, 1, 2), 1) << "2 full micro-batches, one each";
    EXPECT_EQ(steps_per_epoch(3, 4, 1, 2), 0);
}

TEST_F(DataProfileTest, AMissingDatasetIsNamed) {
    ExperimentConfig config = trec_with_glove_sample();
    config.dataset.path = test::fixture("datasets/no_such_file.txt");
    try {
        profile_data(config);
        FAIL() << "profiled a file that is not there";
    } catch (const BadInput& error) {
        EXPECT_NE(std::string(error.what()).find("no_such_file.txt"), std::string::npos)
            << error.what();
    }
}

}  // namespace
}  // namespace oomlab
