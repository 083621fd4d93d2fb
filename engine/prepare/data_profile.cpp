#include "oomlab/prepare/data_profile.h"

#include <algorithm>

#include "oomlab/config/config_io.h"
#include "oomlab/prepare/tokenized_data.h"
#include "oomlab/prepare/vector_source.h"

namespace oomlab {

DataProfile profile_tokens(const ExperimentConfig& config, std::int64_t train_examples,
                           std::int64_t valid_examples, int num_classes,
                           const std::vector<std::vector<std::string>>& train_tokens,
                           const std::vector<std::vector<std::string>>& valid_tokens) {
    DataProfile profile;
    profile.train_examples = train_examples;
    profile.valid_examples = valid_examples;
    profile.num_classes = num_classes;
    // As encoded: cut to max_len, and never empty (an empty text gets one unknown token).
    const auto encoded_length = [&](const std::vector<std::string>& tokens) {
        return std::clamp(static_cast<int>(tokens.size()), 1, config.train.max_len);
    };
    for (const auto& tokens : valid_tokens) {
        profile.valid_lengths.push_back(encoded_length(tokens));
    }
    double total = 0;
    for (const auto& tokens : train_tokens) {
        const int length = encoded_length(tokens);
        profile.lengths.push_back(length);
        profile.longest = std::max(profile.longest, length);
        total += length;
    }
    profile.mean_length = total / std::max<std::size_t>(1, profile.lengths.size());
    return profile;
}

DataProfile profile_data(const ExperimentConfig& config) {
    validate_config(config);
    const auto data = prepare::load_tokenized_data(config);
    DataProfile profile =
        profile_tokens(config, static_cast<std::int64_t>(data->split.train.examples.size()),
                       static_cast<std::int64_t>(data->split.valid.examples.size()),
                       static_cast<int>(data->split.train.label_names.size()), data->train_tokens,
                       data->valid_tokens);
    prepare::profile_vectors(profile, config.embeddings,
                             prepare::vector_shape(config.embeddings, data->train_words),
                             static_cast<std::int64_t>(data->train_words.size()));
    return profile;
}

namespace prepare {

void profile_vectors(DataProfile& profile, const EmbeddingsConfig& config, const VectorShape& shape,
                     std::int64_t dataset_words) {
    profile.vector_rows = shape.rows;
    profile.dataset_words = dataset_words;
    profile.words_with_vector = shape.words_found;
    profile.synthetic_vectors = shape.synthetic;
    profile.embedding_dim = shape.dim;
    profile.vocab_rows = embedding_table_rows(config, shape.rows, dataset_words);
}

}  // namespace prepare

std::int64_t embedding_table_rows(const EmbeddingsConfig& embeddings, std::int64_t vector_rows,
                                  std::int64_t dataset_words) {
    constexpr std::int64_t kSpecialRows = 2;  // <pad>, <unk>
    switch (embeddings.vocab) {
        case VocabMode::Dataset:
            return dataset_words + kSpecialRows;
        case VocabMode::Full:
            return vector_rows + kSpecialRows;
        case VocabMode::Top:
            return std::min(embeddings.top_n, vector_rows) + kSpecialRows;
    }
    return vector_rows + kSpecialRows;
}

std::int64_t steps_per_epoch(std::int64_t examples, int batch_size, int accumulation,
                             int world_size) {
    // Several ranks train on full micro-batches only, the same number each (see shard_plan).
    const std::int64_t micro_batches = world_size > 1 ? examples / batch_size / world_size
                                                      : (examples + batch_size - 1) / batch_size;
    return (micro_batches + accumulation - 1) / accumulation;
}

}  // namespace oomlab
