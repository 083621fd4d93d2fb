// The dataset of an experiment, read, split and tokenized: shared by Experiment::prepare and
// profile_data so both see exactly the same examples and words.
#pragma once

#include <memory>
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
    std::vector<std::string> train_words;  // distinct, in first-seen order
};

// Throws BadInput for unreadable data or a dataset that cannot train a classifier.
//
// A run reads its data twice (its prediction, then its training) and the workbench again at
// each estimate: the last small dataset read is kept and given again while its files are
// unchanged (the same size, times and inode), and its settings the same.
std::shared_ptr<const TokenizedData> load_tokenized_data(const ExperimentConfig& config);

// Frees the dataset kept: training calls it once its examples are encoded, so that the
// process's memory while it trains (a CPU run's figure beside its tensors) is as if the
// data had been read once.
void release_kept_data();

}  // namespace oomlab::prepare
