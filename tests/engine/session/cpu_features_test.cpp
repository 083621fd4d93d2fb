// What the processor runs fast, said where it changes a run's pace.
#include <gtest/gtest.h>

#include "oomlab/session/cpu_features.h"

namespace oomlab {
namespace {

// A bf16 run on the CPU is said to be slow exactly where the processor lacks AVX-512; an fp32
// run, and a run on CUDA, never.
TEST(SlowBf16Note, OnlyForABf16RunOnACpuWithoutAvx512) {
    ExperimentConfig bf16;
    bf16.memory.precision = DType::Bf16;
    const std::string note = session::slow_bf16_note(bf16, "cpu");
    EXPECT_EQ(note.empty(), session::cpu_has_avx512_core()) << note;
    if (!note.empty()) {
        EXPECT_EQ(note.rfind("memory.precision=bf16 on this processor (no AVX-512)", 0), 0u);
    }
    EXPECT_EQ(session::slow_bf16_note(bf16, "cuda:0 (NVIDIA H100 80GB HBM3)"), "");
    EXPECT_EQ(session::slow_bf16_note(ExperimentConfig{}, "cpu"), "");
}

}  // namespace
}  // namespace oomlab
