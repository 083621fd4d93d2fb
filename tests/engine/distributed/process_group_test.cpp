// The process group on its own: two ranks (two threads, Gloo on 127.0.0.1) meet through the
// store rank 0 serves and reduce, broadcast and share values; a peer that never comes ends the
// wait with an error naming the rank, within the timeout.
#include "oomlab/distributed/process_group.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <thread>

#include "foreign_server.h"
#include "oomlab/launch/rendezvous.h"
#include "test_support.h"

namespace oomlab::distributed {
namespace {

// Rank `rank` of 2 whose rendezvous is 127.0.0.1:`port`.
Rendezvous rank_of_two(int rank, int port) {
    Rendezvous rendezvous;
    rendezvous.rank = rank;
    rendezvous.world_size = 2;
    rendezvous.master_port = port;
    return rendezvous;
}

// Rank `rank` of 2, meeting the other on 127.0.0.1:`port`.
ProcessGroup join_two(int rank, int port, std::chrono::seconds timeout) {
    test::share_process_between_ranks();
    return ProcessGroup(rank_of_two(rank, port), DistributedBackend::Gloo, torch::kCPU, timeout);
}

// What each rank of two saw, given its rank and a group to act on.
template <typename Work>
auto on_two_ranks(Work work) {
    const int port = free_loopback_port();
    const auto rank = [&](int number) {
        ProcessGroup group = join_two(number, port, std::chrono::seconds(20));
        return work(group);
    };
    auto second = std::async(std::launch::async, rank, 1);
    auto first = rank(0);
    return std::make_pair(first, second.get());
}

TEST(ProcessGroup, TwoRanksSumTakeTheMaximumAndBroadcast) {
    const auto [rank0, rank1] = on_two_ranks([](ProcessGroup& group) {
        EXPECT_EQ(group.world_size(), 2);
        EXPECT_EQ(group.backend_name(), "gloo");
        const float mine = static_cast<float>(group.rank() + 1);  // 1 and 2
        torch::Tensor sum = torch::full({3}, mine);
        group.all_reduce_sum(sum, "the test's sum");
        torch::Tensor max = torch::tensor({mine, -mine});
        group.all_reduce_max(max, "the test's maximum");
        torch::Tensor root = torch::full({2}, group.rank() == 1 ? 7.0f : 0.0f);
        group.broadcast(root, 1, "the test's broadcast");
        return std::vector<float>{sum[0].item<float>(),  sum[2].item<float>(),
                                  max[0].item<float>(),  max[1].item<float>(),
                                  root[0].item<float>(), root[1].item<float>()};
    });
    const std::vector<float> expected = {3, 3, 2, -1, 7, 7};
    EXPECT_EQ(rank0, expected);
    EXPECT_EQ(rank1, expected);
}

TEST(ProcessGroup, ValuesPublishedByRankZeroReachTheOthers) {
    const auto [rank0, rank1] = on_two_ranks([](ProcessGroup& group) {
        if (group.rank() == 0) {
            group.publish("run_uid", "a1b2c3");
        }
        std::string fetched = group.fetch("run_uid");  // waits for rank 0's value
        // Rank 0 serves the store: it may not end its group before rank 1 has read (as in a
        // run, where training follows).
        torch::Tensor both_read = torch::ones({1});
        group.all_reduce_sum(both_read, "both ranks have read");
        return fetched;
    });
    EXPECT_EQ(rank0, "a1b2c3");
    EXPECT_EQ(rank1, "a1b2c3");
}

TEST(ProcessGroup, APeerThatNeverComesEndsTheWaitWithAnErrorNamingTheRank) {
    try {
        const ProcessGroup group = join_two(0, free_loopback_port(), std::chrono::seconds(2));
        FAIL() << "joined a group whose second rank never started";
    } catch (const CollectiveFailed& error) {
        EXPECT_NE(std::string(error.what()).find("rank 0 of 2"), std::string::npos) << error.what();
    }
}

// SIGINT or SIGTERM while waiting: rank 0 waiting for a rank that never comes, rank 1 for a
// store nobody serves; neither waits for c10d's timeout.
TEST(ProcessGroup, AStopEndsTheWaitForTheOthersAtOnce) {
    for (const int rank : {0, 1}) {
        std::atomic<bool> cancel{false};
        std::thread stop([&cancel] {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            cancel = true;
        });
        test::share_process_between_ranks();
        EXPECT_THROW(ProcessGroup(rank_of_two(rank, free_loopback_port()), DistributedBackend::Gloo,
                                  torch::kCPU, std::chrono::seconds(30), &cancel),
                     Cancelled)
            << "rank " << rank;
        stop.join();
    }
}

// Joins as rank 1 through a program on MASTER_PORT that is not a store, in a child process
// (what c10d's client threads do after the join is given up on is theirs): the rank must end
// with exit code 1 and a message naming the port, never hang or abort.
void join_through_a_foreign_program(test::ForeignServer::Behaviour behaviour) {
    const test::ForeignServer server(behaviour);
    try {
        ProcessGroup group(rank_of_two(1, server.port()), DistributedBackend::Gloo, torch::kCPU,
                           std::chrono::seconds(2));
    } catch (const CollectiveFailed& error) {
        std::fprintf(stderr, "error: %s\n", error.what());
        std::_Exit(1);
    }
    std::_Exit(0);  // joined a group through a program that is not a store
}

class ForeignProgramDeathTest : public ::testing::TestWithParam<test::ForeignServer::Behaviour> {};

// Held without an answer a store gives, c10d's client could wait for ever: the rank ends at
// its timeout. Bytes no store sends, without end: LibTorch 1.13's client fails on a thread of
// its own, which ends the process, with the message (2.x refuses the reply in the join).
TEST_P(ForeignProgramDeathTest, EndsTheRankNamingThePort) {
    ::testing::FLAGS_gtest_death_test_style = "threadsafe";
    EXPECT_EXIT(join_through_a_foreign_program(GetParam()), ::testing::ExitedWithCode(1),
                "rank 1.*MASTER_ADDR, MASTER_PORT");
}

INSTANTIATE_TEST_SUITE_P(
    Programs, ForeignProgramDeathTest,
    ::testing::Values(test::ForeignServer::Behaviour::EightBytesThenHold,
                      test::ForeignServer::Behaviour::Silent,
                      test::ForeignServer::Behaviour::StreamFf),
    [](const ::testing::TestParamInfo<test::ForeignServer::Behaviour>& behaviour) {
        switch (behaviour.param) {
            case test::ForeignServer::Behaviour::Silent:
                return "Silent";
            case test::ForeignServer::Behaviour::EightBytesThenHold:
                return "EightBytesThenHold";
            default:
                return "StreamFf";
        }
    });

}  // namespace
}  // namespace oomlab::distributed
