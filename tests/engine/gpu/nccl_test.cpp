// The NCCL side of data-parallel training on one GPU: a group of one rank (one GPU cannot
// hold two NCCL ranks) sums and broadcasts in place on the device, and the auto backend picks
// NCCL for CUDA.
#include "gpu_test_support.h"
#include "oomlab/distributed/process_group.h"
#include "oomlab/launch/rendezvous.h"

namespace oomlab {
namespace {

TEST(Nccl, AGroupOfOneReducesAndBroadcastsOnTheDevice) {
    OOMLAB_REQUIRE_CUDA();
    Rendezvous rendezvous;
    rendezvous.world_size = 1;
    rendezvous.master_port = free_loopback_port();
    const torch::Device device(torch::kCUDA, 0);
    distributed::ProcessGroup group(rendezvous, DistributedBackend::Auto, device,
                                    std::chrono::seconds(60));
    EXPECT_EQ(group.backend_name(), "nccl");
    torch::Tensor values = torch::arange(4, torch::TensorOptions().device(device));
    group.all_reduce_sum(values, "a test all-reduce");
    group.broadcast(values, 0, "a test broadcast");
    EXPECT_TRUE(torch::equal(values.cpu(), torch::arange(4)));
    torch::Tensor largest = torch::full({1}, 7, torch::TensorOptions().device(device));
    group.all_reduce_max(largest, "a test maximum");
    EXPECT_EQ(largest.item<std::int64_t>(), 7);
}

// The ranks agree on host values (who refuses to join, how a step ended) through the same
// group: NCCL takes device tensors only, so the group moves such a value there and back.
TEST(Nccl, AHostValueIsAgreedOnThroughTheDevice) {
    OOMLAB_REQUIRE_CUDA();
    Rendezvous rendezvous;
    rendezvous.world_size = 1;
    rendezvous.master_port = free_loopback_port();
    distributed::ProcessGroup group(rendezvous, DistributedBackend::Nccl,
                                    torch::Device(torch::kCUDA, 0), std::chrono::seconds(60));
    torch::Tensor status = torch::full({1}, 3, torch::kInt32);
    group.all_reduce_max(status, "agreeing on a test value");
    EXPECT_TRUE(status.is_cpu());
    EXPECT_EQ(status.item<int>(), 3);
}

}  // namespace
}  // namespace oomlab
