// The buffer CUDA's reduction kernel takes from the caching allocator for a sum over a tensor's
// leading dimensions (a bias's gradient: the output's gradient summed over its rows), made and
// freed around the kernel: where the rows are many, ATen's Reduce.cuh splits each column's sum
// across thread blocks, which stage their partial sums in global memory. Its launch
// configuration (setReduceConfig) is modelled for a float tensor on a GPU of 132
// multiprocessors of 2,048 threads each (an H100's or H200's); the sizes it gives are those an
// H200 made for the bias gradients of six scripts (bench/results/gpu-2026-12-04-kernels).
#pragma once

#include <cstdint>

namespace oomlab::allocator {

// Bytes of the buffer for the sum of a float [rows, columns] tensor over its rows; 0 where the
// kernel sums each column in one block.
std::int64_t cuda_sum_buffer_bytes(std::int64_t rows, std::int64_t columns);

}  // namespace oomlab::allocator
