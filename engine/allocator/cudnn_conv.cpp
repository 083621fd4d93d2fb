#include "oomlab/allocator/cudnn_conv.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <tuple>

namespace oomlab::allocator {
namespace {

// Each workspace as a multiple of the input's and output's bytes (their median over the
// recorded shapes of the group, how many after each row: bench/gpu/fit_cudnn_conv.py on
// probe-kernels.json.xz).
struct Multiples {
    int dims;
    std::int64_t kernel;
    std::int64_t stride;
    std::int64_t element;
    bool narrow;  // under 8 input channels
    double forward;
    double backward_input;
    double backward_weight;
};

constexpr std::array<Multiples, 38> kMultiples = {{
    {1, 3, 1, 2, false, 1.03, 1.03, 1.20},  // 20
    {1, 3, 1, 4, false, 1.01, 1.01, 1.24},  // 24
    {1, 4, 1, 2, false, 1.03, 1.03, 1.13},  // 20
    {1, 4, 1, 4, false, 1.02, 1.01, 1.24},  // 16
    {1, 5, 1, 2, false, 1.03, 1.03, 1.19},  // 22
    {1, 5, 1, 4, false, 1.03, 1.02, 1.27},  // 14
    {2, 1, 1, 2, false, 0.00, 0.50, 0.01},  // 213
    {2, 1, 1, 2, true, 0.00, 0.01, 0.00},   // 51
    {2, 1, 1, 4, false, 0.00, 0.00, 0.01},  // 106
    {2, 1, 1, 4, true, 0.00, 0.00, 0.00},   // 22
    {2, 1, 2, 2, false, 1.00, 1.00, 1.01},  // 212
    {2, 1, 2, 2, true, 0.00, 1.00, 1.02},   // 49
    {2, 1, 2, 4, false, 0.00, 0.00, 1.01},  // 102
    {2, 1, 2, 4, true, 0.00, 0.00, 0.00},   // 28
    {2, 3, 1, 2, false, 1.00, 1.00, 1.03},  // 193
    {2, 3, 1, 2, true, 0.00, 1.00, 1.04},   // 43
    {2, 3, 1, 4, false, 1.00, 1.00, 1.01},  // 103
    {2, 3, 1, 4, true, 0.02, 0.00, 1.01},   // 26
    {2, 3, 2, 2, false, 1.00, 1.00, 1.06},  // 227
    {2, 3, 2, 2, true, 0.00, 1.00, 1.08},   // 51
    {2, 3, 2, 4, false, 1.00, 1.00, 1.02},  // 109
    {2, 3, 2, 4, true, 0.00, 0.00, 1.02},   // 31
    {2, 5, 1, 2, false, 1.00, 1.00, 1.02},  // 196
    {2, 5, 1, 2, true, 1.00, 1.00, 1.04},   // 55
    {2, 5, 1, 4, false, 1.01, 1.00, 1.02},  // 103
    {2, 5, 1, 4, true, 0.00, 0.00, 1.01},   // 19
    {2, 5, 2, 2, false, 1.01, 1.01, 1.02},  // 199
    {2, 5, 2, 2, true, 0.93, 1.00, 1.16},   // 51
    {2, 5, 2, 4, false, 1.00, 1.00, 1.04},  // 95
    {2, 5, 2, 4, true, 0.00, 0.00, 1.02},   // 26
    {2, 7, 1, 2, false, 1.01, 1.01, 1.12},  // 227
    {2, 7, 1, 2, true, 1.00, 1.00, 1.05},   // 52
    {2, 7, 1, 4, false, 1.01, 1.01, 1.08},  // 92
    {2, 7, 1, 4, true, 0.02, 0.18, 1.02},   // 29
    {2, 7, 2, 2, false, 1.01, 1.01, 1.19},  // 202
    {2, 7, 2, 2, true, 0.83, 1.00, 1.32},   // 48
    {2, 7, 2, 4, false, 1.01, 1.01, 1.09},  // 112
    {2, 7, 2, 4, true, 0.06, 0.00, 1.05},   // 25
}};

// The row recorded nearest the shape: its dimensionality (a 1x1 kernel's as 2-d, the only ones
// recorded), element size and channels, then the nearest stride, then the nearest kernel.
const Multiples& nearest(const ConvShape& shape) {
    const auto spatial = [&](const std::array<std::int64_t, 3>& sides) {
        return *std::max_element(sides.begin(), sides.begin() + shape.dims);
    };
    const std::int64_t kernel = spatial(shape.kernel);
    const std::int64_t stride = spatial(shape.stride);
    const int dims = kernel == 1 ? 2 : 1 + (shape.dims > 1);
    const std::int64_t element = shape.element == 2 ? 2 : 4;
    const bool narrow = shape.in_channels < 8 && dims == 2;
    const Multiples* best = nullptr;
    for (const Multiples& row : kMultiples) {
        if (row.dims != dims || row.element != element || row.narrow != narrow) {
            continue;
        }
        const auto distance = [&](const Multiples& r) {
            return std::tuple{std::abs(r.stride - stride), std::abs(r.kernel - kernel), r.kernel};
        };
        if (!best || distance(row) < distance(*best)) {
            best = &row;
        }
    }
    return *best;  // every dims, element and narrow above has rows
}

}  // namespace

std::int64_t ConvShape::out_size(int d) const {
    const std::int64_t reach = dilation[d] * (kernel[d] - 1) + 1;
    const std::int64_t room = size[d] + 2 * padding[d] - reach;
    return room < 0 || stride[d] < 1 ? 0 : room / stride[d] + 1;
}

std::int64_t ConvShape::input_bytes() const {
    std::int64_t bytes = batch * in_channels * element;
    for (int d = 0; d < dims; ++d) {
        bytes *= size[d];
    }
    return bytes;
}

std::int64_t ConvShape::output_bytes() const {
    std::int64_t bytes = batch * out_channels * element;
    for (int d = 0; d < dims; ++d) {
        bytes *= out_size(d);
    }
    return bytes;
}

std::int64_t ConvShape::weight_bytes() const {
    std::int64_t bytes = out_channels * (in_channels / groups) * element;
    for (int d = 0; d < dims; ++d) {
        bytes *= kernel[d];
    }
    return bytes;
}

std::optional<CudnnConvWorkspaces> cudnn_conv_workspaces(const ConvShape& shape) {
    if (shape.dims < 1 || shape.dims > 2 || shape.groups != 1 || shape.transposed ||
        shape.in_channels < 1) {
        return std::nullopt;
    }
    for (int d = 0; d < shape.dims; ++d) {
        if (shape.dilation[d] != 1 || shape.kernel[d] < 1 || shape.out_size(d) < 1) {
            return std::nullopt;
        }
    }
    // cuDNN's half-precision kernels pad the input's channels to a multiple of 8.
    const std::int64_t padded =
        shape.element == 2 ? (shape.in_channels + 7) / 8 * 8 : shape.in_channels;
    const double io = double(shape.input_bytes()) / double(shape.in_channels) * double(padded) +
                      double(shape.output_bytes());
    const Multiples& row = nearest(shape);
    return CudnnConvWorkspaces{std::llround(row.forward * io),
                               std::llround(row.backward_input * io),
                               std::llround(row.backward_weight * io)};
}

}  // namespace oomlab::allocator
