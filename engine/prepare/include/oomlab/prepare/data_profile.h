// The shape of an experiment's data, read without tensors: what the estimator needs and what
// preparation will build (examples, classes, table rows, lengths).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "oomlab/config/experiment_config.h"

namespace oomlab {

// What the estimator needs to know about the data, without tensors.
struct DataProfile {
    std::int64_t train_examples = 0;
    std::int64_t valid_examples = 0;
    int num_classes = 2;
    std::int64_t vocab_rows = 0;  // rows of the embedding table
    int embedding_dim = 0;
    int longest = 1;           // tokens of the longest example after max_len
    double mean_length = 1;    // after max_len
    std::vector<int> lengths;  // every training example's length after max_len
    // Every validation example's length after max_len: evaluation walks all of them, so its
    // batches are known (empty where unknown: then taken as long as the longest training
    // example).
    std::vector<int> valid_lengths;

    // The vectors as they are, not as the variant's name says.
    std::int64_t vector_rows = 0;        // words the vector source has (after top:N)
    std::int64_t dataset_words = 0;      // distinct words of the training data
    std::int64_t words_with_vector = 0;  // of them, those the source has a vector for
    bool synthetic_vectors = false;      // no GloVe file: seeded vectors of the variant's shape
};

// Reads the dataset and the vectors' shape for `config` (no training, no tensors); throws
// BadInput like Experiment::prepare.
DataProfile profile_data(const ExperimentConfig& config);

// The data's lengths, examples and classes, as profile_data reads them, from texts already
// tokenized (`train_tokens`, each example's tokens); the vectors' part is left to the caller.
DataProfile profile_tokens(const ExperimentConfig& config, std::int64_t train_examples,
                           std::int64_t valid_examples, int num_classes,
                           const std::vector<std::vector<std::string>>& train_tokens,
                           const std::vector<std::vector<std::string>>& valid_tokens = {});

// Rows of the embedding table under embeddings.vocab: `vector_rows` words the vectors have
// (after top:N), `dataset_words` distinct words of the training data, and the two special
// rows (<pad>, <unk>) every table has.
std::int64_t embedding_table_rows(const EmbeddingsConfig& embeddings, std::int64_t vector_rows,
                                  std::int64_t dataset_words);

// Optimizer steps in one epoch of `examples` in micro-batches of `batch_size`, on each of
// `world_size` data-parallel ranks.
std::int64_t steps_per_epoch(std::int64_t examples, int batch_size, int accumulation,
                             int world_size = 1);

}  // namespace oomlab
