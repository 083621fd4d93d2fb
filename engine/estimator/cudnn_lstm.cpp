#include "cudnn_lstm.h"

#include <algorithm>
#include <array>
#include <cstddef>

namespace oomlab::estimator {
namespace {

// A family of shapes whose workspace is base + per_token * B*L + per_example * B, exactly.
struct WorkspaceFamily {
    std::int64_t element;
    std::int64_t hidden;
    std::int64_t input;
    double base;
    double per_token;
    double per_example;
};

// NVIDIA H200, cuDNN 9.19 (91900), PyTorch 2.11.0+cu130: bench/results/gpu-2026-11-28/probe.json
// through bench/gpu/fit_cudnn_workspace.py. Sorted by element, hidden, input.
constexpr std::array<WorkspaceFamily, 12> kRecorded = {{
    {2, 64, 50, 16894208, 3940, 2312},
    {2, 64, 300, 17150208, 5904, 3336},
    {2, 128, 50, 17142016, 7780, 4616},
    {2, 128, 300, 17654016, 8270, 5596},
    {2, 256, 50, 18030848, 7268, 12296},
    {2, 256, 300, 19054848, 7768, 12296},
    {4, 64, 50, 17010944, 7880, 4616},
    {4, 64, 300, 17522944, 11808, 6664},
    {4, 128, 50, 17506560, 15560, 9224},
    {4, 128, 300, 18530560, 16540, 11184},
    {4, 256, 50, 19284224, 14536, 24584},
    {4, 256, 300, 21332224, 15536, 24584},
}};
constexpr std::array<std::int64_t, 3> kHidden = {64, 128, 256};
constexpr std::int64_t kNarrowInput = 50;
constexpr std::int64_t kWideInput = 300;

struct Coefficients {
    double base = 0;
    double per_token = 0;
    double per_example = 0;
};

Coefficients operator+(Coefficients a, const Coefficients& b) {
    return {a.base + b.base, a.per_token + b.per_token, a.per_example + b.per_example};
}
Coefficients operator*(double f, const Coefficients& c) {
    return {f * c.base, f * c.per_token, f * c.per_example};
}

Coefficients recorded(std::int64_t element, std::int64_t hidden, std::int64_t input) {
    for (const WorkspaceFamily& family : kRecorded) {
        if (family.element == element && family.hidden == hidden && family.input == input) {
            return {family.base, family.per_token, family.per_example};
        }
    }
    return {};
}

// Between the two recorded input widths, and on in the same line past them.
Coefficients at_input(std::int64_t element, std::int64_t hidden, std::int64_t input) {
    const double t = double(input - kNarrowInput) / double(kWideInput - kNarrowInput);
    return (1 - t) * recorded(element, hidden, kNarrowInput) +
           t * recorded(element, hidden, kWideInput);
}

// Between the recorded hidden sizes; past them the per-token and per-example parts in
// proportion to the hidden size (cuDNN's algorithm changes between them, so a straight line
// through two of them says nothing of the next).
Coefficients at_shape(std::int64_t element, std::int64_t hidden, std::int64_t input) {
    if (hidden <= kHidden.front() || hidden >= kHidden.back()) {
        const std::int64_t nearest = hidden <= kHidden.front() ? kHidden.front() : kHidden.back();
        Coefficients c = at_input(element, nearest, input);
        const double scale = double(hidden) / double(nearest);
        return {c.base, scale * c.per_token, scale * c.per_example};
    }
    const auto upper = std::upper_bound(kHidden.begin(), kHidden.end(), hidden);
    const std::int64_t high = *upper;
    const std::int64_t low = *(upper - 1);
    const double t = double(hidden - low) / double(high - low);
    return (1 - t) * at_input(element, low, input) + t * at_input(element, high, input);
}

}  // namespace

CudnnLstmBuffers cudnn_lstm_buffers(const LstmShape& shape) {
    const std::int64_t element = shape.element >= 4 ? 4 : 2;
    const Coefficients c = at_shape(element, shape.hidden, shape.input);
    const double tokens = double(shape.batch) * double(shape.length);
    const double workspace = c.base + c.per_token * tokens + c.per_example * double(shape.batch);
    CudnnLstmBuffers buffers;
    buffers.workspace = std::max<std::int64_t>(0, static_cast<std::int64_t>(workspace + 0.5));
    // Five times the output [L, B, 2H], and 256 bytes: every shape recorded.
    buffers.reserve = 5 * shape.length * shape.batch * 2 * shape.hidden * shape.element + 256;
    return buffers;
}

}  // namespace oomlab::estimator
