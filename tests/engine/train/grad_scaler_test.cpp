// The fp16 grad scaler's rules, on the CPU: unscale once per optimizer step, skip a step whose
// gradients overflowed, back off at once and grow after clean steps.
#include <gtest/gtest.h>

#include "train/grad_scaler.h"

namespace oomlab::train {
namespace {

struct OneWeight {
    torch::Tensor weight = torch::full({3}, 1.0, torch::requires_grad());
    torch::optim::SGD optimizer{std::vector<torch::Tensor>{weight}, torch::optim::SGDOptions(1.0)};
};

TEST(GradScaler, UnscalesOncePerStepAcrossAccumulatedBackwards) {
    OneWeight model;
    GradScaler scaler(torch::kCPU, {/*init_scale=*/1024.0});
    // Two micro-batches: d/dw of sum(w * x) is x; the gradients add up, scaled.
    for (const double x : {0.25, 0.5}) {
        scaler.scale((model.weight * x).sum()).backward();
    }
    EXPECT_DOUBLE_EQ(model.weight.grad()[0].item<double>(), 1024.0 * 0.75);
    ASSERT_TRUE(scaler.step(model.optimizer, {model.weight}));
    EXPECT_DOUBLE_EQ(model.weight.grad()[0].item<double>(), 0.75);  // unscaled once
    EXPECT_DOUBLE_EQ(model.weight[0].item<double>(), 1.0 - 0.75);
    EXPECT_EQ(scaler.skipped_steps(), 0);
}

TEST(GradScaler, SkipsAStepWithInfOrNanAndBacksOff) {
    for (const double bad : {INFINITY, NAN}) {
        OneWeight model;
        GradScaler scaler(torch::kCPU, {/*init_scale=*/1024.0});
        scaler.scale((model.weight * torch::tensor({1.0, bad, 1.0})).sum()).backward();
        EXPECT_FALSE(scaler.step(model.optimizer, {model.weight}));
        EXPECT_TRUE(torch::equal(model.weight, torch::ones({3}))) << "the weights moved";
        EXPECT_EQ(scaler.current_scale(), 512.0);
        EXPECT_EQ(scaler.skipped_steps(), 1);
    }
}

TEST(GradScaler, GrowsAfterTheGrowthIntervalOfCleanSteps) {
    OneWeight model;
    GradScaler scaler(torch::kCPU, {/*init_scale=*/8.0, /*growth_factor=*/2.0,
                                    /*backoff_factor=*/0.5, /*growth_interval=*/3});
    std::vector<double> scales;
    for (int step = 0; step < 7; ++step) {
        model.weight.mutable_grad() = torch::Tensor();
        scaler.scale(model.weight.sum()).backward();
        ASSERT_TRUE(scaler.step(model.optimizer, {model.weight}));
        scales.push_back(scaler.current_scale());
    }
    EXPECT_EQ(scales, (std::vector<double>{8, 8, 16, 16, 16, 32, 32}));
}

TEST(GradScaler, UnscalesSparseGradients) {
    torch::Tensor table = torch::zeros({4, 2}, torch::requires_grad());
    torch::optim::SGD optimizer({table}, torch::optim::SGDOptions(1.0));
    GradScaler scaler(torch::kCPU, {/*init_scale=*/64.0});
    const torch::Tensor ids = torch::tensor({1, 1, 3});
    scaler.scale(torch::embedding(table, ids, -1, false, /*sparse=*/true).sum()).backward();
    ASSERT_TRUE(table.grad().is_sparse());
    ASSERT_TRUE(scaler.step(optimizer, {table}));
    // Row 1 was looked up twice: its gradient is 2 per element, row 3's is 1.
    EXPECT_TRUE(torch::allclose(
        table.detach(), torch::tensor({{0.0, 0.0}, {-2.0, -2.0}, {0.0, 0.0}, {-1.0, -1.0}})))
        << table;
}

}  // namespace
}  // namespace oomlab::train
