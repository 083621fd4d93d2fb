// The torch-free face of an experiment: everything here forwards to the training engine,
// loaded on first use.
#include "oomlab/session/experiment.h"

#include "oomlab/common/errors.h"
#include "oomlab/session/training_backend.h"

namespace oomlab {

Experiment::~Experiment() = default;

std::unique_ptr<Experiment> Experiment::prepare(const ExperimentConfig& config,
                                                const PrepareOptions& options) {
    try {
        return session::training_backend().prepare(config, options);
    } catch (const BadInput& error) {
        if (options.rendezvous) {
            refuse_to_join(*options.rendezvous, error.what(),
                           std::chrono::seconds(config.distributed.timeout_s));
        }
        throw;
    }
}

void refuse_to_join(const Rendezvous& rendezvous, const std::string& why,
                    std::chrono::seconds timeout) {
    session::training_backend().refuse_to_join(rendezvous, why, timeout);
}

std::string torch_version() {
    return OOMLAB_TORCH_VERSION;
}

std::string torch_cuda_version() {
    return OOMLAB_CUDA_VERSION;
}

std::string torch_build() {
    const std::string cuda = torch_cuda_version();
    return "LibTorch " + torch_version() + (cuda.empty() ? ", CPU only" : ", CUDA " + cuda);
}

std::vector<DeviceInfo> available_devices() {
    return session::training_backend().devices();
}

}  // namespace oomlab
