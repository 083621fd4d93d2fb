#include "oomlab/session/cpu_features.h"

namespace oomlab::session {

bool cpu_has_avx512_core() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}

// Without AVX-512 LibTorch (1.13 and 2.x alike) multiplies bf16 matrices one element at a time:
// on an AVX2 EPYC a product of 256 x 256 matrices ran at 4.3 GFLOP/s in bf16 against 132 in
// fp32 with Debian's 1.13, 1.5 against 74 with PyTorch 2.11 (bench/bf16_matmul.py), and a
// bilstm's training step took ten times its fp32 time.
std::string slow_bf16_note(const ExperimentConfig& config, const std::string& device) {
    if (config.memory.precision != DType::Bf16 || device.rfind("cuda", 0) == 0 ||
        cpu_has_avx512_core()) {
        return {};
    }
    return "memory.precision=bf16 on this processor (no AVX-512): LibTorch multiplies bf16 "
           "matrices without vector instructions, so its matrix products take many times their "
           "fp32 time (a bilstm's or a transformer's run about ten times). Its memory is bf16's "
           "all the same; fewer steps show it sooner.";
}

}  // namespace oomlab::session
