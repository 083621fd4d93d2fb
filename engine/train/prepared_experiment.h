// An experiment after preparation: the data encoded, the table's initial weights on the
// host, the device resolved. Training runs read it; each run builds its own model from it.
#pragma once

#include <torch/types.h>

#include <memory>

#include "oomlab/distributed/process_group.h"
#include "oomlab/prepare/text_encoding.h"
#include "oomlab/session/experiment.h"

namespace oomlab::train {

struct PreparedExperiment {
    ExperimentConfig config;
    ExperimentInfo info;
    torch::Device device{torch::kCPU};
    prepare::EncodedExamples train_examples;
    prepare::EncodedExamples valid_examples;
    torch::Tensor initial_embeddings;  // [rows, dim] float32 on the host; each run copies it
    int num_classes = 0;
    // The other processes of a data-parallel run; null when training alone.
    std::shared_ptr<distributed::ProcessGroup> group;
};

// Everything that can fail because of the user's input happens here, before a run exists.
PreparedExperiment prepare_experiment(const ExperimentConfig& config,
                                      const PrepareOptions& options);

// Throws BadInput unless debug.memory_snapshot (already named for this rank and run) can be
// written without replacing one of the run's input files or a file that is not a snapshot.
void check_snapshot_path(const ExperimentConfig& config);

// The Experiment the front ends hold.
std::unique_ptr<Experiment> make_torch_experiment(PreparedExperiment prepared);

}  // namespace oomlab::train
