// A run small enough to work out every byte of by hand, for the estimator's tests.
#pragma once

#include <initializer_list>
#include <string>

#include "engine_support.h"
#include "oomlab/config/experiment_config.h"
#include "oomlab/prepare/data_profile.h"

namespace oomlab::test {

// 6 training examples of 5 tokens, 2 classes, a table of 10 rows x 4.
inline DataProfile tiny_profile() {
    DataProfile profile;
    profile.train_examples = 6;
    profile.valid_examples = 0;
    profile.num_classes = 2;
    profile.vocab_rows = 10;
    profile.embedding_dim = 4;
    profile.longest = 5;
    profile.mean_length = 5;
    profile.lengths.assign(6, 5);
    return profile;
}

// Batches of 2 padded to 5, a bag of width 3, SGD; `settings` on top.
inline ExperimentConfig tiny(std::initializer_list<std::string> settings) {
    return config_with(settings, config_with({"train.batch_size=2", "train.max_len=5",
                                              "model.hidden=3", "train.optimizer=sgd"}));
}

}  // namespace oomlab::test
