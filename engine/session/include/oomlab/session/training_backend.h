// The seam between the torch-free engine and the training engine (liboomlab_train.so): the
// one symbol the training engine exports, found with dlsym when the first experiment is
// prepared. Both sides are built from this header in one build, so C++ types may cross it.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "oomlab/session/experiment.h"

namespace oomlab::session {

struct TrainingBackend {
    int interface_version = 0;
    std::unique_ptr<Experiment> (*prepare)(const ExperimentConfig&,
                                           const PrepareOptions&) = nullptr;
    std::vector<DeviceInfo> (*devices)() = nullptr;
    void (*refuse_to_join)(const Rendezvous&, const std::string&, std::chrono::seconds) = nullptr;
};

inline constexpr int kTrainingBackendVersion = 3;
inline constexpr const char* kTrainingBackendSymbol = "oomlab_training_backend";
inline constexpr const char* kTrainingLibrary = "liboomlab_train.so";

// Loads the training engine on first use (thread-safe). Throws Error naming the library and
// the loader's reason when it cannot be loaded.
const TrainingBackend& training_backend();

}  // namespace oomlab::session

// Defined by the training engine.
extern "C" const oomlab::session::TrainingBackend* oomlab_training_backend();
