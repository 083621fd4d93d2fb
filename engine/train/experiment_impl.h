// The prepared state behind oomlab::Experiment, shared by preparation and the training loop.
#pragma once

#include <torch/types.h>

#include "oomlab/train/experiment.h"
#include "text_encoding.h"

namespace oomlab {

struct Experiment::Impl {
    ExperimentConfig config;
    ExperimentInfo info;
    torch::Device device{torch::kCPU};
    train::EncodedExamples train_examples;
    train::EncodedExamples valid_examples;
    torch::Tensor initial_embeddings;  // [rows, dim] float32 on the host; each run copies it
    int num_classes = 0;
};

namespace train {

// Resolves `device` (auto, cpu, cuda, cuda:N); throws BadInput when it is not available.
torch::Device resolve_device(const std::string& name);
std::string describe_device(const torch::Device& device);

// Optimizer steps in one epoch.
std::int64_t steps_per_epoch(std::int64_t examples, int batch_size, int accumulation);

}  // namespace train
}  // namespace oomlab
