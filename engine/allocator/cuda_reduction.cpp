#include "oomlab/allocator/cuda_reduction.h"

#include <algorithm>

namespace oomlab::allocator {
namespace {

constexpr std::int64_t kMostThreads = 512;  // a reduction block's
constexpr std::int64_t kWarp = 32;
constexpr std::int64_t kMultiprocessors = 132;
constexpr std::int64_t kThreadsPerMultiprocessor = 2048;
constexpr std::int64_t kFloat = 4;

std::int64_t power_of_two_at_most(std::int64_t n) {
    std::int64_t power = 1;
    while (power * 2 <= n) {
        power *= 2;
    }
    return power;
}

std::int64_t divided_up(std::int64_t a, std::int64_t b) {
    return (a + b - 1) / b;
}

}  // namespace

std::int64_t cuda_sum_buffer_bytes(std::int64_t rows, std::int64_t columns) {
    if (rows < 1 || columns < 1) {
        return 0;
    }
    // Each thread reads `vector` adjacent columns at once.
    const std::int64_t vector = columns % 4 == 0 ? 4 : columns % 2 == 0 ? 2 : 1;
    const std::int64_t most_threads = kMostThreads / vector;
    const std::int64_t across = columns / vector;
    const auto fitting = [&](std::int64_t n) {
        return n < most_threads ? power_of_two_at_most(n) : most_threads;
    };
    // The block: a warp's width of columns at most, as many rows as the threads left allow.
    std::int64_t width = std::min(fitting(across), kWarp);
    const std::int64_t height = std::min(fitting(rows), most_threads / width);
    width = std::min(fitting(across), most_threads / height);
    // The rows are split among the block's threads where each would otherwise read many.
    const bool split = rows >= 16 * height || rows >= 256;
    const std::int64_t per_thread = split ? divided_up(rows, height) : rows;
    const std::int64_t blocks_across = divided_up(across, width);
    const std::int64_t blocks_to_fill_the_gpu =
        kMultiprocessors * (kThreadsPerMultiprocessor / (width * height));
    if (!split || per_thread < 256 || blocks_across > blocks_to_fill_the_gpu) {
        return 0;
    }
    // Then among blocks too: enough to fill the GPU, each reading 16 values or more (at most
    // 256) a thread.
    const std::int64_t blocks_per_column = std::max(
        std::min(divided_up(blocks_to_fill_the_gpu, blocks_across), divided_up(per_thread, 16)),
        divided_up(per_thread, 256));
    return blocks_per_column > 1 ? kFloat * columns * blocks_per_column * width * vector : 0;
}

}  // namespace oomlab::allocator
