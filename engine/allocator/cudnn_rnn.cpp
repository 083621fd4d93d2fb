#include "oomlab/allocator/cudnn_rnn.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <tuple>

namespace oomlab::allocator {
namespace {

// The workspace's bytes a token, per direction and byte of element, at the recorded hidden
// sizes and the two recorded input widths (bench/gpu/fit_cudnn_rnn.py on
// probe-rnn-hidden.json.xz). Sorted by mode, directions, hidden.
struct PerToken {
    bool gru;
    std::int64_t directions;
    std::int64_t hidden;
    double narrow;  // input width 64
    double wide;    // input width 300
};

constexpr std::int64_t kNarrow = 64;
constexpr std::int64_t kWide = 300;
// cuDNN changes its way between hidden sizes 192 and 224: its bytes a token drop there (a
// one-directional LSTM's from about 21 x hidden to 5 x hidden + input), so no line is drawn
// across this size.
constexpr std::int64_t kWayChanges = 208;

constexpr std::array<PerToken, 52> kPerToken = {{
    {false, 1, 64, 1408, 1860},   {false, 1, 96, 2080, 2340},   {false, 1, 128, 2752, 2988},
    {false, 1, 160, 3424, 3660},  {false, 1, 192, 4096, 4332},  {false, 1, 224, 1184, 1572},
    {false, 1, 256, 1344, 1668},  {false, 1, 320, 1664, 1900},  {false, 1, 384, 1984, 2220},
    {false, 1, 448, 2304, 2540},  {false, 1, 512, 2624, 2860},  {false, 1, 768, 3904, 4140},
    {false, 1, 1024, 5184, 5420}, {false, 2, 64, 992, 1476},    {false, 2, 96, 1472, 1764},
    {false, 2, 128, 1952, 2070},  {false, 2, 160, 2432, 2550},  {false, 2, 192, 2912, 3030},
    {false, 2, 224, 1600, 1718},  {false, 2, 256, 1824, 1942},  {false, 2, 320, 2272, 2390},
    {false, 2, 384, 2720, 2838},  {false, 2, 448, 3168, 3286},  {false, 2, 512, 3616, 3734},
    {false, 2, 768, 5408, 5526},  {false, 2, 1024, 7200, 7318}, {true, 1, 64, 1280, 1988},
    {true, 1, 96, 1856, 2532},    {true, 1, 128, 2432, 3076},   {true, 1, 160, 3008, 3620},
    {true, 1, 192, 3584, 4164},   {true, 1, 224, 1024, 1572},   {true, 1, 256, 1152, 1668},
    {true, 1, 320, 1408, 1880},   {true, 1, 384, 1664, 2136},   {true, 1, 448, 1920, 2392},
    {true, 1, 512, 2176, 2648},   {true, 1, 768, 3200, 3672},   {true, 1, 1024, 4224, 4696},
    {true, 2, 64, 832, 1540},     {true, 2, 96, 1216, 1860},    {true, 2, 128, 1600, 2180},
    {true, 2, 160, 1984, 2500},   {true, 2, 192, 2368, 2820},   {true, 2, 224, 1376, 1572},
    {true, 2, 256, 1568, 1686},   {true, 2, 320, 1952, 2070},   {true, 2, 384, 2336, 2454},
    {true, 2, 448, 2720, 2838},   {true, 2, 512, 3104, 3222},   {true, 2, 768, 4640, 4758},
    {true, 2, 1024, 6176, 6294},
}};

// The workspace's bytes an example, per layer, direction, hidden unit and byte of element, on
// either side of kWayChanges (fitted over all 1,299 shapes with the rest fixed).
struct PerExample {
    bool gru;
    std::int64_t directions;
    double small_hidden;
    double large_hidden;
};
constexpr std::array<PerExample, 4> kPerExample = {{
    {false, 1, 8.54, 10.01},
    {false, 2, 14.79, 12.00},
    {true, 1, 27.55, -2.49},
    {true, 2, 36.82, 12.26},
}};

constexpr double kPerLayerAndDirection = 8.0 * 1024 * 1024;

double at_input(const PerToken& row, std::int64_t input) {
    const double t = double(std::clamp(input, kNarrow, kWide) - kNarrow) / double(kWide - kNarrow);
    return (1 - t) * row.narrow + t * row.wide;
}

double per_token(const RnnShape& shape) {
    const bool large = shape.hidden > kWayChanges;
    const auto [first, last] = std::equal_range(
        kPerToken.begin(), kPerToken.end(), PerToken{shape.gru, shape.directions, 0, 0, 0},
        [](const PerToken& a, const PerToken& b) {
            return std::tie(a.gru, a.directions) < std::tie(b.gru, b.directions);
        });
    // The rows on the shape's side of the change of way: [from, to).
    const auto middle =
        std::find_if(first, last, [](const PerToken& row) { return row.hidden > kWayChanges; });
    const auto from = large ? middle : first;
    const auto to = large ? last : middle;
    if (std::distance(from, to) < 2) {
        return from == to ? 0 : at_input(*from, shape.input);
    }
    if (shape.hidden <= from->hidden) {
        return at_input(*from, shape.input);
    }
    // Between two rows, or past the last on the line through the last two.
    auto upper =
        std::find_if(from, to, [&](const PerToken& row) { return row.hidden >= shape.hidden; });
    if (upper == to) {
        upper = std::prev(to);
    }
    const PerToken& high = *upper;
    const PerToken& low = *std::prev(upper);
    const double t = double(shape.hidden - low.hidden) / double(high.hidden - low.hidden);
    return (1 - t) * at_input(low, shape.input) + t * at_input(high, shape.input);
}

double per_example(const RnnShape& shape) {
    for (const PerExample& row : kPerExample) {
        if (row.gru == shape.gru && row.directions == shape.directions) {
            return shape.hidden > kWayChanges ? row.large_hidden : row.small_hidden;
        }
    }
    return 0;
}

// The weights' bytes: each layer and direction's input and recurrent matrices, gates x hidden
// rows of the layer's input width and of the hidden size.
double weight_bytes(const RnnShape& shape) {
    const double gates = shape.gru ? 3 : 4;
    double bytes = 0;
    for (std::int64_t layer = 0; layer < shape.layers; ++layer) {
        const double input =
            layer == 0 ? double(shape.input) : double(shape.directions * shape.hidden);
        bytes += double(shape.directions) * gates * double(shape.hidden) *
                 (double(shape.hidden) + input) * double(shape.element);
    }
    return bytes;
}

}  // namespace

CudnnRnnBuffers cudnn_rnn_buffers(const RnnShape& shape) {
    const double per_direction_byte = double(shape.directions) * double(shape.element);
    const double workspace =
        kPerLayerAndDirection * double(shape.layers * shape.directions) + weight_bytes(shape) +
        per_token(shape) * double(shape.batch * shape.length) * per_direction_byte +
        per_example(shape) * double(shape.layers * shape.batch * shape.hidden) * per_direction_byte;
    CudnnRnnBuffers buffers;
    buffers.workspace = std::max<std::int64_t>(0, std::llround(workspace));
    buffers.reserve = ((shape.gru ? 7 : 6) * shape.layers - 1) * shape.output_bytes();
    return buffers;
}

}  // namespace oomlab::allocator
