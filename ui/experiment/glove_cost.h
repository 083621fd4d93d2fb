// What the chosen GloVe variant costs in memory: the table's shape and bytes in its dtype,
// and what training it adds (gradient, optimizer state), for the vocabulary setting.
#pragma once

#include <QString>

#include <cstdint>

#include "oomlab/config/experiment_config.h"

namespace oomlab::ui {

struct GloveCost {
    std::int64_t variantWords = 0;
    int dim = 0;
    std::int64_t rows = 0;           // rows of the table under embeddings.vocab (0: unknown yet)
    std::int64_t tableBytes = 0;     // the weights
    std::int64_t trainingBytes = 0;  // gradient + optimizer state when trainable
};

// `datasetWords`: distinct words of the dataset when known (vocab=dataset), else 0.
GloveCost gloveCost(const ExperimentConfig& config, std::int64_t datasetWords = 0);

// Two lines of rich text for the panel.
QString gloveCostText(const ExperimentConfig& config, std::int64_t datasetWords = 0);

}  // namespace oomlab::ui
