// The fused LSTM's forward step in float: its own sigmoid and tanh against the C library's in
// double, and the whole step against ATen's operations.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <vector>

#include "model/lstm_cell_step.h"

namespace oomlab::model {
namespace {

// The distance between a float of `magnitude`'s size and the next one up.
double ulp_of(double magnitude) {
    const float near = std::abs(static_cast<float>(magnitude));
    return std::nextafter(near, std::numeric_limits<float>::infinity()) - near;
}

// How many floats lie between `actual` and the float nearest `expected`; both must be NaN or
// neither. Results below 1e-37 (a saturated gate) count as equal to zero.
double ulps_apart(float actual, double expected) {
    if (std::isnan(expected)) {
        return std::isnan(actual) ? 0 : std::numeric_limits<double>::infinity();
    }
    if (std::abs(actual) < 1e-37F && std::abs(expected) < 1e-37) {
        return 0;
    }
    return std::abs(static_cast<double>(actual) - expected) / ulp_of(expected);
}

double exact_sigmoid(double x) {
    return 1 / (1 + std::exp(-x));
}

// Every gate's pre-activation from a list of values, in rows of 4H: each value is tried in
// every gate.
torch::Tensor gates_of(const std::vector<float>& values, std::int64_t batch, std::int64_t hidden) {
    torch::Tensor gates = torch::empty({batch, 4 * hidden});
    auto* data = gates.data_ptr<float>();
    for (std::int64_t k = 0; k < gates.numel(); ++k) {
        data[k] = values[static_cast<std::size_t>(k) % values.size()];
    }
    return gates;
}

struct Step {
    torch::Tensor gates, previous_cell, cell, cell_tanh, hidden;
};

Step step_of(const torch::Tensor& gates, const torch::Tensor& previous_cell) {
    const torch::Tensor cell = torch::empty({gates.size(0), gates.size(1) / 4}, gates.options());
    Step step{gates, previous_cell, cell, torch::empty_like(cell), torch::empty_like(cell)};
    cell_step({step.gates, step.previous_cell, step.cell, step.cell_tanh, step.hidden});
    return step;
}

TEST(LstmCellStep, FloatGatesAndCellsAreWithinThreeUlpOfTheCLibrarysInDouble) {
    // Every float in [-12, 12] at a stride, where the gates change; the series' edge; beyond
    // the clamps; the values with no digits to spare.
    std::vector<float> values;
    for (float x = -12.0F; x <= 12.0F; x += 0.000731F) {
        values.push_back(x);
    }
    for (const float x : {0.0F,
                          -0.0F,
                          1e-30F,
                          -1e-30F,
                          1e-40F,
                          0.39999998F,
                          -0.4F,
                          0.40000004F,
                          20.0F,
                          44.0F,
                          45.0F,
                          87.5F,
                          88.5F,
                          100.0F,
                          -100.0F,
                          1e30F,
                          -1e30F,
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN()}) {
        values.push_back(x);
    }
    const std::int64_t hidden = 37;  // no multiple of any vector's width: every tail runs
    const std::int64_t batch = static_cast<std::int64_t>(values.size()) / hidden + 1;
    const torch::Tensor before = gates_of(values, batch, hidden);
    // Previous cells from the same values, scaled, so that c spans what tanh must handle.
    const torch::Tensor previous = before.narrow(1, 0, hidden).mul(1.7).flip(0).contiguous();
    const Step step = step_of(before.clone(), previous);

    const auto* x = before.data_ptr<float>();
    const auto* y = step.gates.data_ptr<float>();
    const auto* p = previous.data_ptr<float>();
    const auto* cells = step.cell.data_ptr<float>();
    const auto* cell_tanh = step.cell_tanh.data_ptr<float>();
    const auto* hiddens = step.hidden.data_ptr<float>();
    double worst_gate = 0;
    double worst_cell = 0;
    double worst_tanh = 0;
    for (std::int64_t b = 0; b < batch; ++b) {
        for (std::int64_t j = 0; j < hidden; ++j) {
            const std::int64_t row = b * 4 * hidden;
            const float i = y[row + j];
            const float f = y[row + hidden + j];
            const float g = y[row + 2 * hidden + j];
            const float o = y[row + 3 * hidden + j];
            worst_gate = std::max({worst_gate, ulps_apart(i, exact_sigmoid(x[row + j])),
                                   ulps_apart(f, exact_sigmoid(x[row + hidden + j])),
                                   ulps_apart(g, std::tanh(double{x[row + 2 * hidden + j]})),
                                   ulps_apart(o, exact_sigmoid(x[row + 3 * hidden + j]))});
            // The cell from the step's own gates: two products and their sum, each rounded
            // (half an ulp of the larger product each, and half of the sum's, at most twice
            // as large); where they cancel, the error is measured against the larger.
            const float c = cells[b * hidden + j];
            const double kept = double{f} * p[b * hidden + j];
            const double added = double{i} * g;
            if (std::isfinite(kept + added)) {
                const double scale = std::max(std::abs(kept), std::abs(added));
                worst_cell = std::max(worst_cell, std::abs(c - (kept + added)) / ulp_of(scale));
            }
            const float tc = cell_tanh[b * hidden + j];
            worst_tanh = std::max(worst_tanh, ulps_apart(tc, std::tanh(double{c})));
            const float h = hiddens[b * hidden + j];
            EXPECT_TRUE(h == o * tc || (std::isnan(h) && std::isnan(o * tc)))
                << "row " << b << ", cell " << j << ": " << h << " against " << o * tc;
        }
    }
    EXPECT_LE(worst_gate, 3.0);
    EXPECT_LE(worst_cell, 2.0);
    EXPECT_LE(worst_tanh, 3.0);
    std::cout << "worst: gates " << worst_gate << " ulp, cells " << worst_cell << ", tanh "
              << worst_tanh << "\n";
}

TEST(LstmCellStep, FloatGivesWhatAtensOperationsGiveInDouble) {
    torch::manual_seed(3);
    for (const bool first : {true, false}) {
        SCOPED_TRACE(first ? "the first step read" : "a later step");
        const torch::Tensor gates = torch::randn({5, 4 * 19}) * 3;
        const torch::Tensor previous = first ? torch::Tensor() : torch::randn({5, 19}) * 2;
        const Step fused = step_of(gates.clone(), previous);
        const Step aten = step_of(gates.to(torch::kFloat64),
                                  first ? torch::Tensor() : previous.to(torch::kFloat64));
        for (const auto& [mine, theirs] :
             {std::pair{fused.gates, aten.gates}, std::pair{fused.cell, aten.cell},
              std::pair{fused.cell_tanh, aten.cell_tanh}, std::pair{fused.hidden, aten.hidden}}) {
            EXPECT_TRUE(torch::allclose(mine.to(torch::kFloat64), theirs, 1e-6, 1e-7));
        }
    }
}

TEST(LstmCellStep, ANanStaysInItsCell) {
    torch::Tensor gates = torch::zeros({2, 4 * 20});
    gates[1][20 + 7] = std::numeric_limits<float>::quiet_NaN();  // row 1's forget gate, cell 7
    const Step step = step_of(gates, torch::ones({2, 20}));
    EXPECT_TRUE(std::isnan(step.cell[1][7].item<float>()));
    EXPECT_TRUE(std::isnan(step.hidden[1][7].item<float>()));
    EXPECT_EQ(step.hidden.isnan().sum().item<int>(), 1);
    EXPECT_EQ(step.cell.isnan().sum().item<int>(), 1);
}

}  // namespace
}  // namespace oomlab::model
