// Where an experiment's word vectors come from: a file, an installed GloVe file of the
// variant, or synthetic vectors of the variant's exact shape.
#pragma once

#include <string>
#include <vector>

#include "oomlab/config/experiment_config.h"
#include "oomlab/glove/glove_table.h"

namespace oomlab::prepare {

struct LoadedVectors {
    GloveTable table;
    std::string description;  // shown to the user: says plainly when vectors are synthetic
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

// Installed files searched for `embeddings.source=default`:
// $OOMLAB_GLOVE_DIR, then <user data>/glove, as glove.<variant>.txt.
std::vector<std::string> glove_search_paths(const std::string& variant);

}  // namespace oomlab::prepare
