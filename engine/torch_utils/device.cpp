#include "oomlab/torch_utils/device.h"

#include <c10/core/Device.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include "oomlab/common/errors.h"

namespace oomlab::torch_utils {

c10::Device resolve_device(const std::string& name) {
    const bool has_cuda = torch::cuda::is_available();
    if (name == "auto") {
        return has_cuda ? c10::Device(c10::kCUDA, 0) : c10::Device(c10::kCPU);
    }
    if (name == "cpu") {
        return c10::Device(c10::kCPU);
    }
    if (!has_cuda) {
        const std::string why =
            OOMLAB_WITH_CUDA ? "this LibTorch (" + std::string(TORCH_VERSION) +
                                   ", with CUDA) sees no CUDA device: no NVIDIA GPU or driver "
                                   "here, or CUDA_VISIBLE_DEVICES hides them"
                             : "this LibTorch (" + std::string(TORCH_VERSION) +
                                   ") was built without CUDA; build OOM Lab against a CUDA "
                                   "LibTorch (see docs/building.md)";
        throw BadInput("device: \"" + name + "\" is not available: " + why +
                       "; use device=cpu or device=auto");
    }
    int index = 0;
    if (name.size() > 5 && name.compare(0, 5, "cuda:") == 0) {
        try {
            index = std::stoi(name.substr(5));
        } catch (const std::exception&) {
            index = -1;
        }
    } else if (name != "cuda") {
        index = -1;
    }
    const int count = static_cast<int>(torch::cuda::device_count());
    if (index < 0 || index >= count) {
        throw BadInput("device: \"" + name + "\" does not exist; there are " +
                       std::to_string(count) +
                       " CUDA devices (cuda:0 .. cuda:" + std::to_string(count - 1) + ")");
    }
    return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index));
}

std::string describe_device(const c10::Device& device) {
    return device.str();
}

}  // namespace oomlab::torch_utils
