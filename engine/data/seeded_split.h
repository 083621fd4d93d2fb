// A seeded train/validation split of example indices (internal to oomlab_data).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace oomlab::data_detail {

struct SplitIndices {
    std::vector<std::size_t> train;  // ascending: the file's order is kept within each part
    std::vector<std::size_t> valid;
};

// Puts round(count * valid_ratio) examples (at least one when the ratio is positive and there
// are two or more, never all of them) into validation. The same count, ratio and seed give
// the same split on every platform: the shuffle uses its own generator, not the standard
// library's distributions.
SplitIndices seeded_split(std::size_t count, double valid_ratio, std::uint64_t seed);

}  // namespace oomlab::data_detail
