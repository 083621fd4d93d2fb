// The fused LSTM's matrix products must give ATen's results for every layout the LSTM passes.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>

#include "model/matrix_product.h"

namespace oomlab::model {
namespace {

// `rows` x `columns` of a larger buffer: a column block, stored transposed or not.
torch::Tensor matrix(std::int64_t rows, std::int64_t columns, bool transposed, torch::Dtype type) {
    const torch::Tensor wide =
        torch::randn({transposed ? columns : rows, 3 * (transposed ? rows : columns)}).to(type);
    const torch::Tensor block =
        wide.narrow(1, transposed ? rows : columns, transposed ? rows : columns);
    return transposed ? block.t() : block;
}

TEST(MatrixProduct, GivesAddmmsResultForEveryLayout) {
    torch::manual_seed(3);
    for (const bool left_transposed : {false, true}) {
        for (const bool right_transposed : {false, true}) {
            for (const float beta : {0.0F, 1.0F}) {
                SCOPED_TRACE(std::to_string(left_transposed) + std::to_string(right_transposed) +
                             " beta " + std::to_string(beta));
                const torch::Tensor a = matrix(32, 48, left_transposed, torch::kFloat32);
                const torch::Tensor b = matrix(48, 20, right_transposed, torch::kFloat32);
                // The output is a column block too, as a step's gates are; with beta 0 its
                // NaNs must not reach the result.
                const torch::Tensor buffer = torch::randn({32, 60});
                const torch::Tensor out = buffer.narrow(1, 20, 20);
                if (beta == 0.0F) {
                    out.fill_(std::numeric_limits<float>::quiet_NaN());
                }
                const torch::Tensor expected = torch::addmm(out, a, b, beta, 1.0);
                const torch::Tensor untouched = buffer.narrow(1, 0, 20).clone();
                multiply_into(out, a, b, beta);
                EXPECT_TRUE(torch::allclose(out, expected, 1e-5, 1e-5))
                    << (out - expected).abs().max().item<float>();
                EXPECT_TRUE(torch::equal(buffer.narrow(1, 0, 20), untouched));
            }
        }
    }
}

TEST(MatrixProduct, SingleRowsAndColumnsAndOtherTypes) {
    torch::manual_seed(4);
    for (const auto type : {torch::kFloat32, torch::kFloat64, torch::kBFloat16}) {
        const torch::Tensor a = torch::randn({1, 8}).to(type);
        const torch::Tensor b = torch::randn({8, 1}).to(type);
        const torch::Tensor out = torch::zeros({1, 1}, type);
        multiply_into(out, a, b, 0.0F);
        EXPECT_TRUE(torch::allclose(out.to(torch::kFloat64), torch::mm(a, b).to(torch::kFloat64),
                                    1e-2, 1e-2));
    }
}

TEST(MatrixProduct, RefusesShapesThatDoNotMultiply) {
    const torch::Tensor out = torch::zeros({2, 3});
    EXPECT_THROW(multiply_into(out, torch::zeros({2, 4}), torch::zeros({5, 3}), 0.0F), c10::Error);
}

}  // namespace
}  // namespace oomlab::model
