// The dataset of an experiment, read, split and tokenized: shared by Experiment::prepare and
// profile_data so both see exactly the same examples and words.
#pragma once

#include <string>
#include <vector>

#include "oomlab/config/experiment_config.h"
#include "oomlab/data/dataset.h"

namespace oomlab::prepare {

using TokenLists = std::vector<std::vector<std::string>>;

struct TokenizedData {
    DatasetSplit split;
    TokenLists train_tokens;
    TokenLists valid_tokens;
};

// Throws BadInput for unreadable data or a dataset that cannot train a classifier.
TokenizedData load_tokenized_data(const ExperimentConfig& config);

// Distinct words in first-seen order.
std::vector<std::string> distinct_words(const TokenLists& tokens);

}  // namespace oomlab::prepare
