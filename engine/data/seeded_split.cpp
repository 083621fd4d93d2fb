#include "seeded_split.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace oomlab::data_detail {
namespace {

// SplitMix64: tiny, well mixed, and defined bit for bit.
class SplitMix64 {
public:
    explicit SplitMix64(std::uint64_t seed) : m_state(seed) {}

    std::uint64_t next() {
        std::uint64_t z = (m_state += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }

    // Uniform in [0, bound) without modulo bias.
    std::uint64_t below(std::uint64_t bound) {
        const std::uint64_t threshold = (0 - bound) % bound;
        while (true) {
            const std::uint64_t value = next();
            if (value >= threshold) {
                return value % bound;
            }
        }
    }

private:
    std::uint64_t m_state;
};

std::size_t valid_count(std::size_t count, double valid_ratio) {
    if (valid_ratio <= 0.0 || count < 2) {
        return 0;
    }
    const auto rounded =
        static_cast<std::size_t>(std::llround(static_cast<double>(count) * valid_ratio));
    return std::clamp<std::size_t>(rounded, 1, count - 1);
}

}  // namespace

SplitIndices seeded_split(std::size_t count, double valid_ratio, std::uint64_t seed) {
    std::vector<std::size_t> order(count);
    std::iota(order.begin(), order.end(), 0);
    SplitMix64 random(seed);
    for (std::size_t i = count; i > 1; --i) {
        std::swap(order[i - 1], order[random.below(i)]);
    }
    const std::size_t n_valid = valid_count(count, valid_ratio);
    SplitIndices split;
    split.valid.assign(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n_valid));
    split.train.assign(order.begin() + static_cast<std::ptrdiff_t>(n_valid), order.end());
    std::sort(split.valid.begin(), split.valid.end());
    std::sort(split.train.begin(), split.train.end());
    return split;
}

}  // namespace oomlab::data_detail
