#include "library_workspaces.h"

#include "oomlab/allocator/cublas_workspaces.h"

namespace oomlab::estimator {
namespace {

constexpr int kCublasHandles = 2;  // the training thread's and autograd's device thread's

}  // namespace

std::int64_t cuda_library_workspace_bytes(const ExperimentConfig& config) {
    return config.on_cuda() ? allocator::cublas_workspaces().bytes(kCublasHandles) : 0;
}

std::int64_t cuda_outside_allocator_bytes(const ExperimentConfig& config, int world_size) {
    if (!config.on_cuda()) {
        return 0;
    }
    // H200, driver 580.159.04, CUDA 13.0, PyTorch 2.11.0: each stage in a fresh process.
    constexpr std::int64_t kIdleDevice = 648347648;     // 618.3 MiB, NVML's used, no process
    constexpr std::int64_t kContext = 645464064;        // 615.6 MiB
    constexpr std::int64_t kCublas = 69206016;          // 66.0 MiB, cuBLAS and cuBLASLt
    constexpr std::int64_t kBackwardThread = 67108864;  // 64.0 MiB, autograd's own products
    constexpr std::int64_t kCudnnLstm = 8388608;        // 8.0 MiB
    constexpr std::int64_t kNccl = 585105408;           // 558.0 MiB, a one-rank group
    std::int64_t bytes = kIdleDevice + kContext + kCublas + kBackwardThread;
    if (config.model.kind == ModelKind::BiLstm) {
        bytes += kCudnnLstm;
    }
    if (world_size > 1 && config.distributed.backend != DistributedBackend::Gloo) {
        bytes += kNccl;
    }
    return bytes;
}

}  // namespace oomlab::estimator
