// What the processor runs fast, where LibTorch's pace on the CPU depends on it.
#pragma once

namespace oomlab::session {

// AVX-512 F, BW, VL and DQ: what OpenBLAS's SkylakeX kernels need.
bool cpu_has_avx512_core();

}  // namespace oomlab::session
