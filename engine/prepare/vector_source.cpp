#include "oomlab/prepare/vector_source.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "oomlab/common/errors.h"
#include "oomlab/common/paths.h"
#include "oomlab/glove/variants.h"

namespace oomlab::prepare {
namespace {

std::int64_t synthetic_rows(const EmbeddingsConfig& config, const GloveVariant& variant,
                            std::int64_t dataset_words) {
    switch (config.vocab) {
        case VocabMode::Full:
            return variant.words;
        case VocabMode::Top:
            return std::min(config.top_n, variant.words);
        case VocabMode::Dataset:
            break;
    }
    return dataset_words;
}

LoadedVectors load_file(const std::string& path, const GloveLoadOptions& options) {
    LoadedVectors loaded{GloveTable::load(path, options), {}};
    loaded.description = "GloVe vectors from " + path + " (" + std::to_string(loaded.table.size()) +
                         " words x " + std::to_string(loaded.table.dim()) + ")";
    if (!loaded.table.note().empty()) {
        loaded.description += "; " + loaded.table.note();
    }
    return loaded;
}

// The file embeddings.source points to, or empty for synthetic vectors.
std::string vector_file(const EmbeddingsConfig& config) {
    if (config.source == EmbeddingSource::File) {
        return config.path;
    }
    if (config.source == EmbeddingSource::Default) {
        for (const auto& path : glove_search_paths(config.variant)) {
            if (std::filesystem::exists(path)) {
                return path;
            }
        }
    }
    return {};
}

const GloveVariant& require_variant(const EmbeddingsConfig& config) {
    const GloveVariant* variant = find_glove_variant(config.variant);
    if (!variant) {
        throw BadInput("embeddings.variant: \"" + config.variant +
                       "\" is not a GloVe variant; "
                       "expected one of: " +
                       glove_variant_names());
    }
    return *variant;
}

}  // namespace

std::vector<std::string> glove_search_paths(const std::string& variant) {
    std::vector<std::string> folders;
    if (const char* dir = std::getenv("OOMLAB_GLOVE_DIR"); dir && *dir) {
        folders.emplace_back(dir);
    }
    folders.push_back(user_data_dir() + "/glove");
    std::vector<std::string> paths;
    for (const auto& folder : folders) {
        paths.push_back(folder + "/glove." + variant + ".txt");
    }
    return paths;
}

VectorShape vector_shape(const EmbeddingsConfig& config,
                         const std::vector<std::string>& dataset_words) {
    const GloveVariant& variant = require_variant(config);
    const std::string file = vector_file(config);
    const auto words = static_cast<std::int64_t>(dataset_words.size());
    if (file.empty()) {
        // Synthetic vectors start with the dataset's words, as many as the table holds.
        const std::int64_t rows = synthetic_rows(config, variant, words);
        return {rows, variant.dim, std::min(rows, words), true};
    }
    GloveLoadOptions options;
    options.verify_vectors = false;  // only the shape and the words are read
    if (config.vocab == VocabMode::Top) {
        options.max_rows = config.top_n;
    }
    const GloveTable table = GloveTable::load(file, options);
    std::int64_t found = 0;
    for (const std::string& word : dataset_words) {
        found += table.find(word) >= 0;
    }
    return {table.size(), table.dim(), found, false};
}

LoadedVectors load_vectors(const EmbeddingsConfig& config,
                           const std::vector<std::string>& dataset_words, std::uint64_t seed,
                           const GloveLoadOptions& options) {
    const GloveVariant* variant = &require_variant(config);
    GloveLoadOptions limited = options;
    if (config.vocab == VocabMode::Top) {
        limited.max_rows = config.top_n;  // the N most frequent words are the first N lines
    }
    if (config.vocab == VocabMode::Dataset) {
        limited.vectors_used = &dataset_words;  // a cache's other vectors are never read
    }
    if (const std::string file = vector_file(config); !file.empty()) {
        return load_file(file, limited);
    }
    const std::int64_t rows =
        synthetic_rows(config, *variant, static_cast<std::int64_t>(dataset_words.size()));
    const std::vector<std::string> leading(
        dataset_words.begin(),
        dataset_words.begin() + std::min<std::int64_t>(rows, dataset_words.size()));
    LoadedVectors loaded{GloveTable::synthesize(rows, variant->dim, seed, leading), {}, true};
    loaded.description = "synthetic vectors in the shape of GloVe " + variant->name + " (" +
                         std::to_string(rows) + " words x " + std::to_string(variant->dim) +
                         ", seeded random values; no GloVe file installed)";
    return loaded;
}

}  // namespace oomlab::prepare
