// The figures of an out-of-memory message in PyTorch's own words (oom_explain.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "oom_explain.h"

namespace oomlab::oom_explain {

std::string printed_size(std::int64_t value) {
    constexpr double kKiB = 1024.0, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
    const double magnitude = std::fabs(static_cast<double>(value));
    if (magnitude <= kKiB) {
        return std::to_string(value) + " bytes";
    }
    const auto [scale, unit] = magnitude <= kMiB   ? std::pair{kKiB, "KiB"}
                               : magnitude <= kGiB ? std::pair{kMiB, "MiB"}
                                                   : std::pair{kGiB, "GiB"};
    char text[48];
    std::snprintf(text, sizeof text, "%.2f %s", static_cast<double>(value) / scale, unit);
    return text;
}

std::string printed_or_not_given(std::optional<std::int64_t> value) {
    return value ? printed_size(*value) : "(not given)";
}

Backend backend_of(const OomMessage& m) {
    if (m.backend == "DirectML") {  // Windows' DirectX 12 GPUs through torch-directml
        return {"the GPU",
                "the Task Manager's Performance tab (dedicated GPU memory)",
                "torch_directml.device(index)",
                "",
                "",
                false,
                "torch_directml"};
    }
    const bool xpu = m.backend == "XPU", npu = m.backend == "NPU", hip = m.backend == "HIP";
    const std::string kind = xpu ? "XPU" : npu ? "NPU" : "GPU";
    return {m.device_index >= 0 ? kind + " " + std::to_string(m.device_index) : "the " + kind,
            xpu   ? "xpu-smi"
            : npu ? "npu-smi info"
            : hip ? "rocm-smi"
                  : "nvidia-smi",
            xpu   ? "ZE_AFFINITY_MASK"
            : npu ? "ASCEND_RT_VISIBLE_DEVICES"
            : hip ? "HIP_VISIBLE_DEVICES"
                  : "CUDA_VISIBLE_DEVICES",
            // torch_npu reads its own; ROCm's builds read HIP's (newer ones CUDA's too); 2.9
            // and later read PYTORCH_ALLOC_CONF on each: as the message's own hint names it.
            npu                    ? "PYTORCH_NPU_ALLOC_CONF"
            : m.generic_alloc_conf ? "PYTORCH_ALLOC_CONF"
            : hip                  ? "PYTORCH_HIP_ALLOC_CONF"
                                   : "PYTORCH_CUDA_ALLOC_CONF",
            hip          ? "AMD_SERIALIZE_KERNEL=3"
            : xpu || npu ? ""
                         : "CUDA_LAUNCH_BLOCKING=1",
            !xpu && !npu && !hip,
            xpu   ? "torch.xpu"
            : npu ? "torch.npu"
                  : "torch.cuda"};
}

std::int64_t rounding_of(std::int64_t printed) {
    constexpr std::int64_t kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
    return printed <= kKiB   ? 0
           : printed <= kMiB ? kKiB / 200
           : printed <= kGiB ? kMiB / 200
                             : kGiB / 200;
}

// A difference of printed figures: said as none where it is within their rounding, not as the
// "1 bytes" the subtraction leaves.
std::string difference(std::int64_t value, std::int64_t rounding) {
    return value > rounding ? printed_size(value)
                            : "at most " + printed_size(std::max<std::int64_t>(rounding, 1)) +
                                  " (the printed figures' rounding)";
}

std::string asked_on(const OomMessage& m, const std::string& device) {
    std::string fact = m.requested ? "asked for " + printed_size(*m.requested)
                                   : std::string("asked for an allocation (its size is not given)");
    fact += " on " + device;
    if (m.total) {
        fact += " of " + printed_size(*m.total);
    }
    if (m.free) {
        fact += (m.total ? ", of which " : "; ") + printed_size(*m.free) + " was free";
    }
    return fact;
}

std::int64_t segment_for(std::int64_t requested) {
    constexpr std::int64_t kMiB = 1 << 20;
    if (requested <= kMiB) {
        return 2 * kMiB;
    }
    if (requested < 10 * kMiB) {
        return 20 * kMiB;
    }
    return (requested + 2 * kMiB - 1) / (2 * kMiB) * (2 * kMiB);
}

}  // namespace oomlab::oom_explain
