// Shared by the GPU tests: skipping without a device, and small configs on cuda:0.
#pragma once

#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <initializer_list>
#include <string>

#include "engine_support.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/session/run_session.h"

#define OOMLAB_REQUIRE_CUDA()                                                 \
    do {                                                                      \
        if (!torch::cuda::is_available()) {                                   \
            GTEST_SKIP() << "no CUDA device (this LibTorch or this machine)"; \
        }                                                                     \
    } while (0)

namespace oomlab::test {

inline ExperimentConfig cuda_config(std::initializer_list<std::string> assignments) {
    return config_with(assignments, config_with({"device=cuda:0", "embeddings.source=synthetic",
                                                 "model.kind=transformer", "train.optimizer=adam",
                                                 "dataset.valid_ratio=0.05", "train.max_len=64"}));
}

}  // namespace oomlab::test
