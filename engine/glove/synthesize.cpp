// Synthetic tables with the shape of a real variant and values that look like GloVe's.
//
// The real 6B vectors are roughly zero-mean with a standard deviation near 0.4, each dimension
// with its own spread, a few dimensions with a clear offset, and tails heavier than a normal
// (rare words have larger norms). We draw value = mean[d] + scale[d] * row_scale * z with z
// close to normal, row_scale log-normal (the heavy tails), and round to 5 significant digits
// as the published files are, so written text has a realistic size and reads back exactly.
#include <array>
#include <charconv>
#include <cmath>

#include "oomlab/common/errors.h"
#include "oomlab/glove/glove_table.h"
#include "parallel.h"
#include "table_impl.h"
#include "word_index.h"

namespace oomlab {
namespace {

constexpr int kQuantileBits = 12;
constexpr int kQuantiles = 1 << kQuantileBits;
constexpr int kMaxSyntheticDim = 1 << 20;
constexpr std::int64_t kRowsPerTask = 4096;

// Deterministic, fast, and good enough for noise (SplitMix64).
class SplitMix {
public:
    explicit SplitMix(std::uint64_t seed) : m_state(seed) {}
    std::uint64_t next() {
        std::uint64_t z = (m_state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

private:
    std::uint64_t m_state;
};

double standard_normal_cdf(double x) {
    return 0.5 * std::erfc(-x / std::sqrt(2.0));
}

// Newton's method on the normal CDF; from 0 it converges monotonically (the CDF is concave on
// the side the root is on).
double standard_normal_quantile(double p) {
    double x = 0.0;
    for (int step = 0; step < 100; ++step) {
        const double density = std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
        const double delta = (standard_normal_cdf(x) - p) / density;
        x -= delta;
        if (std::fabs(delta) < 1e-12) {
            break;
        }
    }
    return x;
}

// Quantiles of the standard normal; drawing is a table look-up and one interpolation, far
// cheaper than Box-Muller for hundreds of millions of values.
const std::array<float, kQuantiles + 1>& normal_quantiles() {
    static const std::array<float, kQuantiles + 1> table = [] {
        std::array<float, kQuantiles + 1> values{};
        for (int i = 0; i <= kQuantiles; ++i) {
            values[i] = static_cast<float>(standard_normal_quantile((i + 0.5) / (kQuantiles + 1)));
        }
        return values;
    }();
    return table;
}

float normal_from_bits(std::uint32_t bits, const std::array<float, kQuantiles + 1>& quantiles) {
    const std::uint32_t index = bits >> (32 - kQuantileBits);
    const float fraction =
        static_cast<float>(bits & ((1u << (32 - kQuantileBits)) - 1)) * 0x1.0p-20f;
    return quantiles[index] + fraction * (quantiles[index + 1] - quantiles[index]);
}

// Branch-free: a table look-up for the scale and the add-and-subtract trick for rounding (at
// 1.5 * 2^52 a double has no fraction bits left), instead of a loop of divisions and a libm
// call per value.
float round_to_5_significant_digits(double value) {
    static constexpr double kScales[] = {1e9, 1e8, 1e7, 1e6, 1e5, 1e4, 1e3};
    constexpr double kRoundingShift = 6755399441055744.0;
    const double magnitude = std::fabs(value);
    const int bucket = (magnitude >= 1e-4) + (magnitude >= 1e-3) + (magnitude >= 1e-2) +
                       (magnitude >= 1e-1) + (magnitude >= 1.0) + (magnitude >= 10.0);
    const double scale = kScales[bucket];
    const double rounded = (value * scale + kRoundingShift) - kRoundingShift;
    return static_cast<float>(rounded / scale);
}

struct DimensionShape {
    std::vector<double> mean;
    std::vector<double> scale;
};

DimensionShape make_dimension_shape(int dim, std::uint64_t seed) {
    const auto& quantiles = normal_quantiles();
    SplitMix random(seed ^ 0xD1B54A32D192ED03ull);
    DimensionShape shape;
    shape.mean.resize(dim);
    shape.scale.resize(dim);
    for (int d = 0; d < dim; ++d) {
        shape.scale[d] = 0.30 + 0.15 * random.uniform();
        double mean = 0.04 * normal_from_bits(static_cast<std::uint32_t>(random.next()), quantiles);
        if (random.uniform() < 0.05) {  // a few dimensions carry a clear offset
            mean += (random.uniform() < 0.5 ? -1.0 : 1.0) * (0.3 + 0.6 * random.uniform());
        }
        shape.mean[d] = mean;
    }
    return shape;
}

void fill_rows(float* matrix, int dim, std::int64_t first, std::int64_t last, std::uint64_t seed,
               const DimensionShape& shape) {
    const auto& quantiles = normal_quantiles();
    for (std::int64_t row = first; row < last; ++row) {
        // Each row has its own stream, so the result does not depend on the thread count.
        SplitMix random(seed + 0x632BE59BD9B4E019ull * static_cast<std::uint64_t>(row + 1));
        const double row_scale =
            std::exp(0.25 * normal_from_bits(static_cast<std::uint32_t>(random.next()), quantiles));
        float* values = matrix + row * dim;
        for (int d = 0; d < dim; d += 2) {
            const std::uint64_t bits = random.next();
            const float pair[2] = {
                normal_from_bits(static_cast<std::uint32_t>(bits), quantiles),
                normal_from_bits(static_cast<std::uint32_t>(bits >> 32), quantiles)};
            for (int k = 0; k < 2 && d + k < dim; ++k) {
                const double value = shape.mean[d + k] + shape.scale[d + k] * row_scale * pair[k];
                values[d + k] = round_to_5_significant_digits(value);
            }
        }
    }
}

}  // namespace

GloveTable GloveTable::synthesize(std::int64_t rows, int dim, std::uint64_t seed,
                                  const std::vector<std::string>& leading_words) {
    if (rows < 0 || dim < 1 || dim > kMaxSyntheticDim) {
        throw BadInput("a synthetic GloVe table needs rows >= 0 and 1 <= dim <= " +
                       std::to_string(kMaxSyntheticDim) + " (got " + std::to_string(rows) + " x " +
                       std::to_string(dim) + ")");
    }
    auto table = std::make_shared<Impl>();
    table->rows = rows;
    table->dim = dim;
    table->format = GloveFormat::Synthetic;
    table->matrix_storage =
        glove_detail::AnonymousRegion(static_cast<std::size_t>(rows) * dim * sizeof(float));
    auto* matrix = static_cast<float*>(table->matrix_storage.data());
    table->matrix = matrix;

    const DimensionShape shape = make_dimension_shape(dim, seed);
    const std::int64_t tasks = (rows + kRowsPerTask - 1) / kRowsPerTask;
    const auto threads = static_cast<std::int64_t>(glove_detail::hardware_threads());
    const std::size_t workers =
        static_cast<std::size_t>(std::max<std::int64_t>(1, std::min(threads, tasks)));
    glove_detail::run_parallel(workers, [&](std::size_t worker) {
        for (std::int64_t task = static_cast<std::int64_t>(worker); task < tasks;
             task += static_cast<std::int64_t>(workers)) {
            const std::int64_t first = task * kRowsPerTask;
            fill_rows(matrix, dim, first, std::min(rows, first + kRowsPerTask), seed, shape);
        }
    });

    std::vector<std::uint64_t>& offsets = table->offsets_storage;
    std::vector<char>& bytes = table->bytes_storage;
    offsets.reserve(static_cast<std::size_t>(rows) + 1);
    offsets.push_back(0);
    const auto leading =
        std::min<std::int64_t>(rows, static_cast<std::int64_t>(leading_words.size()));
    for (std::int64_t row = 0; row < leading; ++row) {
        const std::string& word = leading_words[static_cast<std::size_t>(row)];
        bytes.insert(bytes.end(), word.begin(), word.end());
        offsets.push_back(bytes.size());
    }
    constexpr std::string_view kFillerPrefix = "<synthetic_";
    for (std::int64_t row = leading; row < rows; ++row) {
        char number[24];
        char* number_end = std::to_chars(number, number + sizeof number, row).ptr;
        bytes.insert(bytes.end(), kFillerPrefix.begin(), kFillerPrefix.end());
        bytes.insert(bytes.end(), number, number_end);
        bytes.push_back('>');
        offsets.push_back(bytes.size());
    }
    glove_detail::WordIndex index =
        glove_detail::build_word_index(offsets.data(), bytes.data(), rows);
    table->index_storage = std::move(index.slots);
    table->duplicates_storage = std::move(index.duplicate_rows);
    table->use_owned_words_and_index();
    return GloveTable(std::move(table));
}

}  // namespace oomlab
