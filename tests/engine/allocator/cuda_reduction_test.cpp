// The buffer CUDA's reduction kernel takes for a bias's gradient, against the sizes an H200
// took for the masked-encoder script's (bench/results/gpu-2026-12-04-kernels: its history's
// allocations made in gpu_reduce_kernel, and the CPU profile's sums of the same shapes).
#include <gtest/gtest.h>

#include "oomlab/allocator/cuda_reduction.h"

namespace oomlab::allocator {
namespace {

TEST(CudaReduction, ABiasGradientOfManyRowsTakesTheBufferAnH200Took) {
    // [tokens, width] summed over the tokens: the feed-forward's and the projections' biases.
    EXPECT_EQ(cuda_sum_buffer_bytes(3072, 256), 6291456);
    EXPECT_EQ(cuda_sum_buffer_bytes(3336, 256), 6946816);
    EXPECT_EQ(cuda_sum_buffer_bytes(3720, 256), 7733248);
    EXPECT_EQ(cuda_sum_buffer_bytes(4536, 256), 9306112);
    EXPECT_EQ(cuda_sum_buffer_bytes(3072, 1024), 25165824);
    EXPECT_EQ(cuda_sum_buffer_bytes(4536, 1024), 37224448);
}

TEST(CudaReduction, FewRowsAreSummedInOneBlockWithoutABuffer) {
    EXPECT_EQ(cuda_sum_buffer_bytes(24, 10), 0);  // the classifier's bias, a batch of 24
    EXPECT_EQ(cuda_sum_buffer_bytes(256, 768), 0);
    EXPECT_EQ(cuda_sum_buffer_bytes(16, 4096), 0);
    EXPECT_EQ(cuda_sum_buffer_bytes(0, 768), 0);
    EXPECT_EQ(cuda_sum_buffer_bytes(768, 0), 0);
}

}  // namespace
}  // namespace oomlab::allocator
