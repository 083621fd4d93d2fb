// The models' dropout: ATen's CPU dropout's tensors and statistics, its mask drawn faster.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>

#include "model/dropout.h"
#include "oomlab/measure/tracking_allocator.h"

namespace oomlab::model {
namespace {

class DropoutTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() { memory::install_tracking_allocator(); }
};

// The mask a training forward applied to `x`: the output divided by the input.
torch::Tensor mask_of(const torch::Tensor& output, const torch::Tensor& x) {
    return output.to(torch::kFloat32) / x.to(torch::kFloat32);
}

// x with no zero, so that every dropped element shows as a zero of the output.
torch::Tensor nonzero_input(at::IntArrayRef sizes, torch::ScalarType type = torch::kFloat32) {
    return (torch::rand(sizes) + 0.5).to(type);
}

TEST_F(DropoutTest, InEvaluationTheInputPassesOn) {
    Dropout dropout(0.3);
    dropout->eval();
    const torch::Tensor x = nonzero_input({64, 32});
    EXPECT_TRUE(dropout->forward(x).is_same(x));
}

TEST_F(DropoutTest, KeepsEachElementWithOneMinusPScaledByItsInverse) {
    Dropout dropout(0.25);
    const torch::Tensor x = nonzero_input({1024, 1024});
    const torch::Tensor mask = mask_of(dropout->forward(x), x);
    const torch::Tensor kept = mask != 0;
    // 2^20 draws: the kept fraction's standard deviation is 0.0004.
    EXPECT_NEAR(kept.to(torch::kFloat64).mean().item<double>(), 0.75, 0.004);
    EXPECT_TRUE(torch::allclose(mask.masked_select(kept),
                                torch::full({kept.sum().item<std::int64_t>()}, 1 / 0.75), 1e-5));
    // Elements drawn together (four a draw) and apart are independent: both kept 0.75^2 of
    // the time, whatever their distance.
    const torch::Tensor flat = kept.flatten();
    for (const std::int64_t apart : {1, 2, 3, 4, 5, 1024, 1 << 19}) {
        const std::int64_t pairs = flat.numel() - apart;
        EXPECT_NEAR((flat.narrow(0, 0, pairs) & flat.narrow(0, apart, pairs))
                        .to(torch::kFloat64)
                        .mean()
                        .item<double>(),
                    0.5625, 0.004)
            << apart << " apart";
    }
}

TEST_F(DropoutTest, TheSeedGivesTheSameMasksWithAnyNumberOfThreads) {
    Dropout dropout(0.5);
    const torch::Tensor x = nonzero_input({300, 1001});
    const int threads = at::get_num_threads();
    torch::manual_seed(7);
    at::set_num_threads(1);
    const torch::Tensor first = dropout->forward(x);
    const torch::Tensor second = dropout->forward(x);
    torch::manual_seed(7);
    at::set_num_threads(2);
    const torch::Tensor again = dropout->forward(x);
    at::set_num_threads(threads);
    EXPECT_TRUE(torch::equal(first, again));
    EXPECT_FALSE(torch::equal(first, second)) << "each call draws a new mask";
}

TEST_F(DropoutTest, TheGradientIsTheMask) {
    Dropout dropout(0.4);
    const torch::Tensor x = nonzero_input({50, 70}).requires_grad_();
    const torch::Tensor output = dropout->forward(x);
    output.sum().backward();
    EXPECT_TRUE(torch::allclose(x.grad(), mask_of(output.detach(), x.detach()), 1e-5));
}

TEST_F(DropoutTest, Bfloat16AndTransposedInputs) {
    Dropout dropout(0.25);
    for (const torch::Tensor& x :
         {nonzero_input({512, 768}, torch::kBFloat16), nonzero_input({768, 512}).t(),
          nonzero_input({4, 512, 384}).permute({2, 0, 1})}) {
        const torch::Tensor output = dropout->forward(x);
        EXPECT_EQ(output.scalar_type(), x.scalar_type());
        EXPECT_EQ(output.sizes(), x.sizes());
        const torch::Tensor kept = output != 0;
        EXPECT_NEAR(kept.to(torch::kFloat64).mean().item<double>(), 0.75, 0.006);
        const double scale = x.scalar_type() == torch::kBFloat16 ? 1e-2 : 1e-5;
        EXPECT_TRUE(torch::allclose(mask_of(output, x).masked_select(kept),
                                    torch::full({kept.sum().item<std::int64_t>()}, 1 / 0.75),
                                    scale));
    }
}

// What the estimator counts for a dropout on the CPU: a mask and an output, each of the
// input's size, and the mask held for backward while the graph lives.
TEST_F(DropoutTest, MakesAMaskAndAnOutputAndTheGraphKeepsTheMask) {
    Dropout dropout(0.1);
    const torch::Tensor x = nonzero_input({256, 384}).requires_grad_();
    const std::int64_t bytes = x.numel() * 4;
    for (const bool with_grad : {true, false}) {
        torch::AutoGradMode grad_mode(with_grad);
        memory::reset_cpu_peak();
        const memory::CpuTensorStats before = memory::cpu_tensor_stats();
        const torch::Tensor output = dropout->forward(x);
        const memory::CpuTensorStats after = memory::cpu_tensor_stats();
        EXPECT_EQ(after.allocations - before.allocations, 2) << with_grad;
        EXPECT_EQ(after.peak_bytes - before.current_bytes, 2 * bytes) << with_grad;
        EXPECT_EQ(after.current_bytes - before.current_bytes, with_grad ? 2 * bytes : bytes);
    }
}

}  // namespace
}  // namespace oomlab::model
