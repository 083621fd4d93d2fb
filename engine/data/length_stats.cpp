#include "oomlab/data/length_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace oomlab {

std::size_t length_percentile(const std::vector<std::size_t>& sorted, double percent) {
    if (sorted.empty()) {
        return 0;
    }
    const double clamped = std::clamp(percent, 0.0, 100.0);
    const auto rank = static_cast<std::size_t>(std::ceil(clamped / 100.0 * sorted.size()));
    return sorted[std::max<std::size_t>(rank, 1) - 1];
}

LengthStats length_stats(std::vector<std::size_t> lengths) {
    LengthStats stats;
    if (lengths.empty()) {
        return stats;
    }
    std::sort(lengths.begin(), lengths.end());
    stats.count = lengths.size();
    stats.total_tokens = std::accumulate(lengths.begin(), lengths.end(), std::size_t{0});
    stats.mean = static_cast<double>(stats.total_tokens) / static_cast<double>(stats.count);
    stats.min = lengths.front();
    stats.max = lengths.back();
    stats.p50 = length_percentile(lengths, 50.0);
    stats.p90 = length_percentile(lengths, 90.0);
    stats.p95 = length_percentile(lengths, 95.0);
    stats.p99 = length_percentile(lengths, 99.0);
    return stats;
}

LengthStats token_length_stats(const std::vector<Example>& examples,
                               const TokenizerOptions& options) {
    std::vector<std::size_t> lengths;
    lengths.reserve(examples.size());
    std::vector<std::string> tokens;
    for (const Example& example : examples) {
        tokenize(example.text, options, tokens);
        lengths.push_back(tokens.size());
    }
    return length_stats(std::move(lengths));
}

}  // namespace oomlab
