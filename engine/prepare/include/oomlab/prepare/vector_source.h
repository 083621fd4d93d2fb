// Where an experiment's word vectors come from: a file, an installed GloVe file of the
// variant, or synthetic vectors of the variant's exact shape.
#pragma once

#include <string>
#include <vector>

#include "oomlab/config/experiment_config.h"
#include "oomlab/glove/glove_table.h"
#include "oomlab/prepare/data_profile.h"

namespace oomlab::prepare {

struct LoadedVectors {
    GloveTable table;
    std::string description;  // shown to the user: says plainly when vectors are synthetic
    bool synthetic = false;   // no file: seeded vectors of the variant's shape
};

// `dataset_words` (first-seen order) lead a synthetic table, so the data finds its words.
LoadedVectors load_vectors(const EmbeddingsConfig& config,
                           const std::vector<std::string>& dataset_words, std::uint64_t seed,
                           const GloveLoadOptions& options);

// The table's shape without building it: rows available and their dimension. Reads a file's
// header or cache when the vectors come from a file.
struct VectorShape {
    std::int64_t rows = 0;
    int dim = 0;
    std::int64_t words_found = 0;  // of `dataset_words`, those with a vector
    bool synthetic = false;
};
VectorShape vector_shape(const EmbeddingsConfig& config,
                         const std::vector<std::string>& dataset_words);

// Fills the vectors' part of a data profile (DataProfile's vector_rows to vocab_rows) from
// their shape and the training data's `dataset_words` distinct words.
void profile_vectors(DataProfile& profile, const EmbeddingsConfig& config, const VectorShape& shape,
                     std::int64_t dataset_words);

// Installed files searched for `embeddings.source=default`:
// $OOMLAB_GLOVE_DIR, then <user data>/glove, as glove.<variant>.txt.
std::vector<std::string> glove_search_paths(const std::string& variant);

}  // namespace oomlab::prepare
