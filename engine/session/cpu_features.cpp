#include "oomlab/session/cpu_features.h"

namespace oomlab::session {

bool cpu_has_avx512_core() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}

}  // namespace oomlab::session
