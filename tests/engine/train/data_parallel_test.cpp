// The data-parallel pieces on their own: each rank's part of an epoch, and two ranks (two
// threads, Gloo on 127.0.0.1) averaging gradients and updating shards to the same result a
// single process gets from the mean gradient.
#include <gtest/gtest.h>
#include <torch/optim/sgd.h>

#include <future>
#include <set>

#include "oomlab/distributed/process_group.h"
#include "oomlab/launch/rendezvous.h"
#include "test_support.h"
#include "train/batching.h"
#include "train/data_parallel.h"

namespace oomlab::train {
namespace {

// Rank `rank` of 2, meeting the other on 127.0.0.1:`port`.
distributed::ProcessGroup join_two(int rank, int port, std::chrono::seconds timeout) {
    Rendezvous rendezvous;
    rendezvous.rank = rank;
    rendezvous.world_size = 2;
    rendezvous.master_port = port;
    test::share_process_between_ranks();
    return distributed::ProcessGroup(rendezvous, DistributedBackend::Gloo, torch::kCPU, timeout);
}

TEST(ShardPlan, RanksGetDisjointFullBatchesOfEqualCount) {
    std::vector<std::vector<std::int64_t>> plan;
    for (std::int64_t batch = 0; batch < 7; ++batch) {
        plan.push_back({batch * 4, batch * 4 + 1, batch * 4 + 2, batch * 4 + 3});
    }
    plan.push_back({28, 29});  // the short last batch
    const auto rank0 = shard_plan(plan, 4, 0, 2);
    const auto rank1 = shard_plan(plan, 4, 1, 2);
    ASSERT_EQ(rank0.size(), 3u);  // 7 full batches: 3 each, one left out
    ASSERT_EQ(rank1.size(), 3u);
    std::set<std::int64_t> seen;
    for (const auto& part : {rank0, rank1}) {
        for (const auto& batch : part) {
            EXPECT_EQ(batch.size(), 4u);
            for (const std::int64_t example : batch) {
                EXPECT_TRUE(seen.insert(example).second) << example << " on two ranks";
            }
        }
    }
    EXPECT_EQ(shard_plan(plan, 4, 0, 1), plan) << "one rank keeps everything";
}

struct Setup {
    ShardMode shard;
    std::int64_t bucket_bytes;  // 0: each gradient in a bucket of its own
};

// Two parameters of 5 and 7 elements (12 in all, 6 per rank when sharded), one backward pass
// and one SGD step with lr 1, which subtracts the mean gradient. With `rank1_leaves_first`
// rank 1 first leaves a step of two micro-batches before its forward pass (as after an
// out-of-memory error) while rank 0 trains it: the step is dropped on both.
std::vector<torch::Tensor> train_one_step(int rank, int port, Setup setup,
                                          bool rank1_leaves_first = false) {
    distributed::ProcessGroup group = join_two(rank, port, std::chrono::seconds(20));
    // Different on each rank: the broadcast must fix that. (Not torch's global generator:
    // both ranks are threads of this process.)
    std::vector<torch::Tensor> parameters{
        (torch::arange(5, torch::kFloat) * (rank + 1)).requires_grad_(),
        (torch::arange(7, torch::kFloat) * (rank + 1) + 5).requires_grad_()};
    DataParallel parallel(group, setup.shard, parameters, setup.bucket_bytes);
    parallel.share_initial_parameters();
    torch::optim::SGD optimizer(parallel.optimizer_parameters(), torch::optim::SGDOptions(1.0));
    // A loss whose gradient is rank + 1 everywhere but one marker (mean 20).
    std::vector<torch::Tensor> gradients{torch::full({5}, rank + 1.0),
                                         torch::full({7}, rank + 1.0)};
    gradients[1][6] = rank == 0 ? 10.0 : 30.0;
    const auto backward = [&] {
        ((parameters[0] * gradients[0]).sum() + (parameters[1] * gradients[1]).sum()).backward();
        parallel.after_backward();
    };
    if (rank1_leaves_first) {
        if (rank == 0) {
            backward();
            backward();
        } else {
            parallel.leave_step(2);
        }
        EXPECT_EQ(parallel.agree(rank), 1);  // the collectives pair up again here
        if (rank == 0) {
            parallel.leave_step(2);  // both drop the step, as an agreed OOM does
        }
        for (torch::Tensor& parameter : parameters) {
            parameter.mutable_grad() = torch::Tensor();
        }
    }
    backward();
    parallel.before_step();
    optimizer.step();
    parallel.after_step();
    std::vector<torch::Tensor> result;
    for (const torch::Tensor& parameter : parameters) {
        result.push_back(parameter.detach().clone());
    }
    return result;
}

void PrintTo(const Setup& setup, std::ostream* out) {
    *out << "shard " << static_cast<int>(setup.shard) << ", buckets of " << setup.bucket_bytes
         << " bytes";
}

class TwoRanks : public ::testing::TestWithParam<Setup> {};

TEST_P(TwoRanks, EndWithTheParametersTheMeanGradientGives) {
    for (const bool leave : {false, true}) {
        const int port = free_loopback_port();
        auto rank1 = std::async(std::launch::async, train_one_step, 1, port, GetParam(), leave);
        const std::vector<torch::Tensor> rank0 = train_one_step(0, port, GetParam(), leave);
        const std::vector<torch::Tensor> other = rank1.get();

        // Rank 0's initial weights, which every rank starts from, less the mean gradient.
        std::vector<torch::Tensor> expected{torch::arange(5, torch::kFloat) - 1.5,
                                            torch::arange(7, torch::kFloat) + 5 - 1.5};
        expected[1][6] += 1.5 - 20.0;
        for (std::size_t i = 0; i < expected.size(); ++i) {
            EXPECT_TRUE(torch::allclose(rank0[i], expected[i]))
                << (leave ? "after a step left: " : "") << rank0[i] << expected[i];
            EXPECT_TRUE(torch::equal(rank0[i], other[i])) << "rank 1 differs in parameter " << i;
        }
    }
}

std::string setup_name(const ::testing::TestParamInfo<Setup>& param) {
    static const char* const kNames[] = {"none", "optimizer", "gradients"};
    return std::string(kNames[static_cast<int>(param.param.shard)]) +
           (param.param.bucket_bytes == 0 ? "_each_alone" : "_one_bucket");
}

INSTANTIATE_TEST_SUITE_P(ShardModes, TwoRanks,
                         ::testing::Values(Setup{ShardMode::None, 0},
                                           Setup{ShardMode::None, 1 << 20},
                                           Setup{ShardMode::Optimizer, 1 << 20},
                                           Setup{ShardMode::Gradients, 0},
                                           Setup{ShardMode::Gradients, 1 << 20}),
                         setup_name);

TEST(DataParallelSharding, EachRankUpdatesHalfOfTheElements) {
    const int port = free_loopback_port();
    const auto views_of = [port](int rank) {
        distributed::ProcessGroup group = join_two(rank, port, std::chrono::seconds(20));
        DataParallel parallel(
            group, ShardMode::Optimizer,
            {torch::zeros({9}).requires_grad_(), torch::zeros({3}).requires_grad_()}, 1 << 20);
        std::int64_t elements = 0;
        for (const torch::Tensor& view : parallel.optimizer_parameters()) {
            elements += view.numel();
        }
        return elements;
    };
    auto rank1 = std::async(std::launch::async, views_of, 1);
    EXPECT_EQ(views_of(0), 6);
    EXPECT_EQ(rank1.get(), 6) << "the 9-element parameter is split between the ranks";
}

}  // namespace
}  // namespace oomlab::train
