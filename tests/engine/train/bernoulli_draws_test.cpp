// The engine's Bernoulli draws on the CPU (where LibTorch has no MKL): LibTorch's kernel's
// statistics and tensors, drawn faster, the same again for a seed; and dropout made of them.
#include <ATen/core/dispatch/Dispatcher.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "oomlab/measure/tracking_allocator.h"

namespace oomlab::model {
namespace {

class BernoulliDraws : public ::testing::Test {
protected:
    static void SetUpTestSuite() { memory::install_tracking_allocator(); }
};

// The file that registered the dispatcher's CPU kernel of bernoulli_(p).
std::string cpu_kernel_of_bernoulli() {
    const auto op = c10::Dispatcher::singleton().findSchema({"aten::bernoulli_", "float"});
    if (!op.has_value()) {
        return "no aten::bernoulli_.float";
    }
    const std::string table = "\n" + op->dumpComputedTable();
    const std::size_t cpu = table.find("\nCPU:");
    return cpu == std::string::npos ? table : table.substr(cpu, table.find('\n', cpu + 1) - cpu);
}

TEST_F(BernoulliDraws, TheCpuKernelIsTheEnginesWhereLibTorchHasNoMkl) {
    const std::string kernel = cpu_kernel_of_bernoulli();
    EXPECT_EQ(kernel.find("bernoulli_draws.cpp") != std::string::npos, !at::hasMKL()) << kernel;
}

// The fraction of ones, and of pairs of ones `apart` elements apart (independent draws:
// p squared), of a tensor of 2^20 draws; their standard deviations are under 0.0005.
TEST_F(BernoulliDraws, EachIsOneWithProbabilityPIndependentlyOfTheOthers) {
    for (const double p : {0.9, 0.25}) {
        const torch::Tensor drawn = torch::empty({1024, 1024}).bernoulli_(p);
        EXPECT_TRUE(((drawn == 0) | (drawn == 1)).all().item<bool>());
        const torch::Tensor ones = drawn.flatten() == 1;
        EXPECT_NEAR(ones.to(torch::kFloat64).mean().item<double>(), p, 0.004) << p;
        for (const std::int64_t apart : {1, 2, 3, 4, 5, 1024, 1 << 19}) {
            const std::int64_t pairs = ones.numel() - apart;
            EXPECT_NEAR((ones.narrow(0, 0, pairs) & ones.narrow(0, apart, pairs))
                            .to(torch::kFloat64)
                            .mean()
                            .item<double>(),
                        p * p, 0.004)
                << p << ", " << apart << " apart";
        }
    }
}

TEST_F(BernoulliDraws, ASeedGivesTheSameDrawsWithAnyNumberOfThreads) {
    const torch::Tensor x = torch::empty({300, 1001});
    const int threads = at::get_num_threads();
    torch::manual_seed(7);
    at::set_num_threads(1);
    const torch::Tensor first = x.clone().bernoulli_(0.5);
    const torch::Tensor second = x.clone().bernoulli_(0.5);
    torch::manual_seed(7);
    at::set_num_threads(2);
    const torch::Tensor again = x.clone().bernoulli_(0.5);
    at::set_num_threads(threads);
    EXPECT_TRUE(torch::equal(first, again));
    EXPECT_FALSE(torch::equal(first, second)) << "each call draws anew";
    // A generator of its own: its seed, not the default one's.
    auto generator = at::detail::createCPUGenerator(11);
    const torch::Tensor own = x.clone().bernoulli_(0.5, generator);
    generator.set_current_seed(11);
    EXPECT_TRUE(torch::equal(own, x.clone().bernoulli_(0.5, generator)));
}

TEST_F(BernoulliDraws, Bfloat16AndTransposedTensors) {
    for (torch::Tensor drawn :
         {torch::empty({512, 768}, torch::kBFloat16), torch::empty({768, 512}).t(),
          torch::empty({4, 512, 384}).permute({2, 0, 1})}) {
        drawn.bernoulli_(0.75);
        EXPECT_NEAR(drawn.to(torch::kFloat64).mean().item<double>(), 0.75, 0.006);
        EXPECT_TRUE(((drawn == 0) | (drawn == 1)).all().item<bool>());
    }
}

// What the engine does not draw is LibTorch's: integer tensors, layouts that reach an element
// twice or skip storage, and a probability outside [0, 1], refused in LibTorch's words.
TEST_F(BernoulliDraws, OtherTensorsAndProbabilitiesOutsideZeroToOneAreLibTorchs) {
    const torch::Tensor integers = torch::zeros({4096}, torch::kLong).bernoulli_(0.5);
    EXPECT_NEAR(integers.to(torch::kFloat64).mean().item<double>(), 0.5, 0.05);
    const torch::Tensor storage = torch::full({64, 128}, 7.0);
    storage.slice(1, 0, 128, 2).bernoulli_(0.5);  // every other column
    EXPECT_TRUE((storage.slice(1, 1, 128, 2) == 7).all().item<bool>());
    const torch::Tensor drawn = storage.slice(1, 0, 128, 2);
    EXPECT_TRUE(((drawn == 0) | (drawn == 1)).all().item<bool>());
    try {
        torch::empty({16}).bernoulli_(1.5);
        ADD_FAILURE() << "a probability of 1.5 was drawn";
    } catch (const c10::Error& error) {
        EXPECT_NE(std::string(error.what()).find("bernoulli_ expects p to be in [0, 1]"),
                  std::string::npos)
            << error.what();
    }
}

// Dropout, made of these draws: a mask of the input's type and size, the same bytes as with
// LibTorch's own kernel, each kept element scaled by 1 / (1 - p), and the mask held for
// backward while the graph lives.
TEST_F(BernoulliDraws, DropoutKeepsOneMinusPScaledAndHoldsItsMask) {
    const torch::Tensor x = (torch::rand({256, 384}) + 0.5).requires_grad_();
    const std::int64_t bytes = x.numel() * 4;
    for (const bool with_grad : {true, false}) {
        torch::AutoGradMode grad_mode(with_grad);
        memory::reset_cpu_peak();
        const memory::CpuTensorStats before = memory::cpu_tensor_stats();
        const torch::Tensor output = torch::dropout(x, 0.25, /*train=*/true);
        const memory::CpuTensorStats after = memory::cpu_tensor_stats();
        EXPECT_EQ(after.peak_bytes - before.current_bytes, 2 * bytes) << with_grad;
        EXPECT_EQ(after.current_bytes - before.current_bytes, with_grad ? 2 * bytes : bytes);
        const torch::Tensor mask = output.detach() / x.detach();
        const torch::Tensor kept = mask != 0;
        EXPECT_NEAR(kept.to(torch::kFloat64).mean().item<double>(), 0.75, 0.01);
        EXPECT_TRUE(torch::allclose(mask.masked_select(kept),
                                    torch::full({kept.sum().item<std::int64_t>()}, 1 / 0.75),
                                    1e-5));
    }
}

}  // namespace
}  // namespace oomlab::model
