#include "library_workspaces.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>

namespace oomlab::estimator {
namespace {

constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kHopperCublasWorkspace = 4096 * kKiB * 8;  // ":4096:8"
constexpr std::int64_t kCublasLtWorkspace = 1024 * kKiB;
constexpr int kCublasHandles = 2;  // the training thread's and autograd's device thread's

std::optional<std::string_view> environment(const char* name) {
    const char* value = std::getenv(name);
    return value ? std::optional<std::string_view>(value) : std::nullopt;
}

// A decimal number at the front of `text`, which it then starts after.
std::optional<std::int64_t> take_number(std::string_view& text) {
    std::int64_t number = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (error != std::errc() || end == text.data()) {
        return std::nullopt;
    }
    text.remove_prefix(static_cast<std::size_t>(end - text.data()));
    return number;
}

}  // namespace

std::optional<std::int64_t> parse_cublas_workspace_config(std::string_view value) {
    std::int64_t total = 0;
    bool found = false;
    // Every ":SIZE:COUNT" in the text, as PyTorch's regular expression finds them.
    for (std::size_t at = value.find(':'); at != std::string_view::npos;
         at = value.find(':', at + 1)) {
        std::string_view rest = value.substr(at + 1);
        const auto size = take_number(rest);
        if (!size || rest.empty() || rest.front() != ':') {
            continue;
        }
        rest.remove_prefix(1);
        if (const auto count = take_number(rest)) {
            total += *size * kKiB * *count;
            found = true;
            at = value.size() - rest.size() - 1;  // on past the pair
        }
    }
    return found ? std::optional<std::int64_t>(total) : std::nullopt;
}

std::int64_t cuda_library_workspace_bytes(const ExperimentConfig& config) {
    if (!config.on_cuda()) {
        return 0;
    }
    std::int64_t cublas = kHopperCublasWorkspace;
    if (const auto value = environment("CUBLAS_WORKSPACE_CONFIG")) {
        cublas = parse_cublas_workspace_config(*value).value_or(cublas);
    }
    std::int64_t cublas_lt = kCublasLtWorkspace;
    if (const auto value = environment("CUBLASLT_WORKSPACE_SIZE")) {
        std::string_view text = *value;
        cublas_lt = take_number(text).value_or(kCublasLtWorkspace / kKiB) * kKiB;
    }
    // PyTorch limits cuBLASLt's workspace to cuBLAS's.
    return kCublasHandles * cublas + std::min(cublas_lt, cublas);
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
