// The cells of an expensive grid (the prediction grids, the fixes of capped runs) that this
// build's suite runs. The grids run whole in the Debian build, the README's suite; the CUDA
// build's test preset sets OOMLAB_TEST_GRID_STRIDE=4 and runs a quarter of each, spread over
// both of its dimensions, which is enough to catch what only another LibTorch changes.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

namespace oomlab::test {

// Every cell with OOMLAB_TEST_GRID_STRIDE unset; with N, the cells i with i mod N equal to
// (i / N) mod N: of a grid laid out as rows of N, one cell of each row, each in another column.
template <typename Cell>
std::vector<Cell> grid_sample(const std::vector<Cell>& cells) {
    const char* text = std::getenv("OOMLAB_TEST_GRID_STRIDE");
    const long stride = text != nullptr ? std::strtol(text, nullptr, 10) : 1;
    if (stride <= 1) {
        return cells;
    }
    std::vector<Cell> sample;
    for (std::size_t i = 0; i < cells.size(); ++i) {
        const auto n = static_cast<std::size_t>(stride);
        if (i % n == (i / n) % n) {
            sample.push_back(cells[i]);
        }
    }
    return sample;
}

}  // namespace oomlab::test
