// The torch-free face of an experiment: everything here forwards to the training engine,
// loaded on first use.
#include "oomlab/session/experiment.h"

#include "oomlab/common/errors.h"
#include "oomlab/config/config_io.h"
#include "oomlab/prepare/tokenized_data.h"
#include "oomlab/session/training_backend.h"

namespace oomlab {

Experiment::~Experiment() = default;

std::unique_ptr<Experiment> Experiment::prepare(const ExperimentConfig& config,
                                                const PrepareOptions& options) {
    try {
        // The settings and the dataset are checked before the engine is loaded: a mistake in
        // them (a dataset path mistyped, a file that cannot train) is said at once, not after
        // LibTorch's load (0.3-0.5 s), and the engine trains on what was read here.
        validate_config(config);
        PrepareOptions read = options;
        if (!read.data) {
            if (read.progress) {
                read.progress("dataset", 0.0);
            }
            read.data = prepare::load_tokenized_data(config);
        }
        return session::training_backend().prepare(config, read);
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
