// What the processor runs fast, where LibTorch's pace on the CPU depends on it.
#pragma once

#include <string>

#include "oomlab/config/experiment_config.h"

namespace oomlab::session {

// AVX-512 F, BW, VL and DQ: what OpenBLAS's SkylakeX kernels and LibTorch's vector bf16
// matrix products (oneDNN's) both need.
bool cpu_has_avx512_core();

// Why this run trains many times slower than in fp32, for a bf16 run on a CPU without
// AVX-512; empty otherwise. `device` is the run's (ExperimentInfo::device).
std::string slow_bf16_note(const ExperimentConfig& config, const std::string& device);

}  // namespace oomlab::session
