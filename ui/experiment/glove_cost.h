// What the GloVe vectors cost in memory: the table's shape and bytes in its dtype, and what
// training it adds (gradient, optimizer state), for the vocabulary setting. Once the inputs
// are read (a DataProfile), the shape is the file's, not the variant's name's, and the share
// of the dataset's words that have a vector is known.
#pragma once

#include <QString>

#include <cstdint>

#include "oomlab/config/experiment_config.h"
#include "oomlab/prepare/data_profile.h"

namespace oomlab::ui {

struct GloveCost {
    std::int64_t sourceWords = 0;  // words the vectors have: the file's, or the variant's
    int dim = 0;
    std::int64_t rows = 0;           // rows of the table under embeddings.vocab (0: unknown yet)
    std::int64_t tableBytes = 0;     // the weights
    std::int64_t trainingBytes = 0;  // gradient + optimizer state when trainable
};

// `profile`: the inputs as read, when known.
GloveCost gloveCost(const ExperimentConfig& config, const DataProfile* profile = nullptr);

// A few lines of rich text for the panel.
QString gloveCostText(const ExperimentConfig& config, const DataProfile* profile = nullptr);

}  // namespace oomlab::ui
