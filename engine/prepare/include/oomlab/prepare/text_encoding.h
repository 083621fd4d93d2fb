// From text and GloVe rows to token ids and the embedding table's initial weights.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "oomlab/config/experiment_config.h"
#include "oomlab/data/dataset.h"
#include "oomlab/glove/glove_table.h"

namespace oomlab::prepare {

// Examples as token ids, cut to max_len: example i is ids[offsets[i] .. offsets[i+1]).
struct EncodedExamples {
    std::vector<std::int64_t> ids;
    std::vector<std::int64_t> offsets{0};
    std::vector<std::int64_t> labels;

    std::int64_t size() const { return static_cast<std::int64_t>(labels.size()); }
    std::int64_t length(std::int64_t i) const { return offsets[i + 1] - offsets[i]; }
};

// The embedding table's rows: row 0 is padding (zeros), row 1 the unknown word.
struct EmbeddingRows {
    std::int64_t rows = 0;
    int dim = 0;
    float* weights = nullptr;        // rows x dim, in the caller's buffer
    std::int64_t vectors_found = 0;  // dataset words with a pre-trained vector
    std::int64_t dataset_words = 0;  // distinct words in the training data
    // Token -> row; every token of the data goes through it.
    std::function<std::int64_t(const std::string&)> row_of;
};

// Builds the rows for `embeddings.vocab` from `vectors` and the training texts. Words with
// no pre-trained vector (vocab=dataset) start as small random rows (seeded).
// `allocate(rows, dim)` returns the buffer to fill (e.g. a tensor's), so a large table is
// written once. `vectors` must outlive row_of.
using RowBufferAllocator = std::function<float*(std::int64_t rows, int dim)>;
EmbeddingRows build_embedding_rows(const EmbeddingsConfig& config, const GloveTable& vectors,
                                   const std::vector<std::vector<std::string>>& train_tokens,
                                   std::uint64_t seed, const RowBufferAllocator& allocate);

EncodedExamples encode_examples(const std::vector<std::vector<std::string>>& tokens,
                                const std::vector<Example>& examples, const EmbeddingRows& rows,
                                int max_len);

}  // namespace oomlab::prepare
