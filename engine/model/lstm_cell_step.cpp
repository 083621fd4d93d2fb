#include "lstm_cell_step.h"

#include <ATen/ops/addcmul.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/sigmoid.h>
#include <ATen/ops/tanh.h>
#include <c10/util/Exception.h>

#include <cstdint>
#include <vector>

#include "lstm_step_rows.h"
#include "oomlab/common/bit_cast.h"

namespace oomlab::model {
namespace {

// e^x, written so that a loop of it vectorises (the sigmoid and tanh made of it are within 1.8
// ulp of the C library's in double: lstm_cell_step_test):
// x = n ln 2 + r with |r| <= ln 2 / 2, e^r by its Taylor series to r^7 (the next term is below
// 1e-8 of it), 2^n made in the exponent's bits. Clamped to [-87, 88] so that 2^n stays a
// normal float (the cells saturate long before); NaN passes through the clamps.
inline float exp_of(float x) {
    constexpr float kMax = 88.0F;
    constexpr float kMin = -87.0F;
    constexpr float kLog2e = 1.44269504088896341F;
    // ln 2 split in two: n * kLn2High is exact for |n| < 2^15, so r loses nothing.
    constexpr float kLn2High = 0.693359375F;
    constexpr float kLn2Low = -2.12194440e-4F;
    // Adding 1.5 * 2^23 rounds to an integer, which then sits in the mantissa's low bits.
    constexpr float kRounder = 12582912.0F;
    x = x > kMax ? kMax : x;
    x = x < kMin ? kMin : x;
    const float shifted = x * kLog2e + kRounder;
    const float n = shifted - kRounder;
    const float r = (x - n * kLn2High) - n * kLn2Low;
    float p = 1.0F / 5040;
    p = p * r + 1.0F / 720;
    p = p * r + 1.0F / 120;
    p = p * r + 1.0F / 24;
    p = p * r + 1.0F / 6;
    p = p * r + 0.5F;
    p = p * r + 1.0F;
    p = p * r + 1.0F;
    const float two_to_n = bit_cast<float>(
        (bit_cast<std::uint32_t>(shifted) - bit_cast<std::uint32_t>(kRounder) + 127U) << 23);
    return p * two_to_n;
}

// ATen's formula: 1 / (1 + e^-x).
inline float sigmoid_of(float x) {
    return 1.0F / (1.0F + exp_of(-x));
}

// Near zero, tanh's Taylor series to x^13 (the next term is below 4e-9 of x there); beyond,
// 1 - 2 / (e^2|x| + 1), which near zero would lose the digits the series keeps.
inline float tanh_of(float x) {
    constexpr float kSeriesBelow = 0.4F;
    const float z = x * x;
    float series = 21844.0F / 6081075;
    series = series * z - 1382.0F / 155925;
    series = series * z + 62.0F / 2835;
    series = series * z - 17.0F / 315;
    series = series * z + 2.0F / 15;
    series = series * z - 1.0F / 3;
    series = series * z * x + x;
    const float magnitude = x < 0 ? -x : x;
    const float far = 1.0F - 2.0F / (exp_of(2.0F * magnitude) + 1.0F);
    const float signed_far =
        bit_cast<float>(bit_cast<std::uint32_t>(far) | (bit_cast<std::uint32_t>(x) & 0x80000000U));
    return magnitude < kSeriesBelow ? series : signed_far;
}

// One row of the batch: H cells. GCC vectorises the loop for the widest registers the
// processor has (one clone each, chosen when the library loads). AVX-512's clone fuses
// multiplies and adds at -O2, so its last bits differ from the others' (as oneDNN's products
// do by processor); the error bounds hold either way. Its pointers never alias.
__attribute__((target_clones("avx512f", "avx2", "default"))) void row_cell_step(
    float* __restrict input, float* __restrict forget, float* __restrict candidate,
    float* __restrict output, const float* __restrict previous_cell, float* __restrict cell,
    float* __restrict cell_tanh, float* __restrict hidden, std::int64_t size) {
    for (std::int64_t j = 0; j < size; ++j) {
        const float i = sigmoid_of(input[j]);
        const float f = sigmoid_of(forget[j]);
        const float g = tanh_of(candidate[j]);
        const float o = sigmoid_of(output[j]);
        const float c = f * previous_cell[j] + i * g;
        const float tc = tanh_of(c);
        input[j] = i;
        forget[j] = f;
        candidate[j] = g;
        output[j] = o;
        cell[j] = c;
        cell_tanh[j] = tc;
        hidden[j] = o * tc;
    }
}

void float_cell_step(const CellStep& step) {
    const std::int64_t size = step.cell.size(1);
    // The first step read has no cell before it: a row of zeros stands for it (f * 0 + i * g).
    std::vector<float> zeros(step.previous_cell.defined() ? 0 : size, 0.0F);
    for (std::int64_t b = 0; b < step.gates.size(0); ++b) {
        float* gates = row_of<float>(step.gates, b);
        const float* previous =
            step.previous_cell.defined() ? row_of<float>(step.previous_cell, b) : zeros.data();
        row_cell_step(gates, gates + size, gates + 2 * size, gates + 3 * size, previous,
                      row_of<float>(step.cell, b), row_of<float>(step.cell_tanh, b),
                      row_of<float>(step.hidden, b), size);
    }
}

// Other types: ATen's operations, in place in the same buffers.
void aten_cell_step(const CellStep& step) {
    const std::int64_t size = step.cell.size(1);
    step.gates.narrow(1, 0, 2 * size).sigmoid_();
    const at::Tensor input = step.gates.narrow(1, 0, size);
    const at::Tensor candidate = step.gates.narrow(1, 2 * size, size).tanh_();
    const at::Tensor output = step.gates.narrow(1, 3 * size, size).sigmoid_();
    // The _out functions take their output by reference; these are handles on the same views.
    at::Tensor cell = step.cell;
    at::Tensor cell_tanh = step.cell_tanh;
    at::Tensor hidden = step.hidden;
    if (step.previous_cell.defined()) {
        at::mul_out(cell, step.gates.narrow(1, size, size), step.previous_cell);
        cell.addcmul_(input, candidate);
    } else {
        at::mul_out(cell, input, candidate);
    }
    at::tanh_out(cell_tanh, cell);
    at::mul_out(hidden, output, cell_tanh);
}

}  // namespace

void cell_step(const CellStep& step) {
    TORCH_CHECK(rows_contiguous(step.gates) && rows_contiguous(step.cell) &&
                    rows_contiguous(step.cell_tanh) && rows_contiguous(step.hidden) &&
                    (!step.previous_cell.defined() || rows_contiguous(step.previous_cell)) &&
                    step.gates.size(1) == 4 * step.cell.size(1),
                "cell_step: views of [B, 4H] and [B, H] with contiguous rows");
    if (step.gates.scalar_type() == at::kFloat) {
        float_cell_step(step);
    } else {
        aten_cell_step(step);
    }
}

}  // namespace oomlab::model
