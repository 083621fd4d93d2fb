// The processes of a data-parallel run, as torch.distributed's c10d joins them: a TCPStore
// for the rendezvous and a Gloo (CPU) or NCCL (CUDA) process group for the collectives.
//
// Every collective waits at most the configured timeout. A peer that died or stopped shows up
// as CollectiveFailed naming this rank and the operation, never as a hang.
#pragma once

#include <torch/types.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "oomlab/common/errors.h"
#include "oomlab/config/experiment_config.h"
#include "oomlab/launch/rendezvous.h"

namespace oomlab::distributed {

// A collective did not complete: a peer process ended, failed or did not arrive in time.
class CollectiveFailed : public Error {
public:
    using Error::Error;
};

class ProcessGroup {
public:
    // Joins the group described by `rendezvous` (rank 0 serves the store). Throws BadInput
    // for a backend this build or device cannot use, CollectiveFailed when the others do not
    // arrive within `timeout` or what answers on the port is not a store, and Cancelled as
    // soon as `cancel` is set (SIGINT, SIGTERM) while it waits.
    ProcessGroup(const Rendezvous& rendezvous, DistributedBackend backend,
                 const torch::Device& device, std::chrono::seconds timeout,
                 const std::atomic<bool>* cancel = nullptr);
    ~ProcessGroup();
    ProcessGroup(const ProcessGroup&) = delete;
    ProcessGroup& operator=(const ProcessGroup&) = delete;

    int rank() const;
    int world_size() const;
    const std::string& backend_name() const;  // "gloo", "nccl"

    // Element-wise sum or maximum across ranks, in place; `what` names it in errors.
    void all_reduce_sum(torch::Tensor& tensor, const char* what);
    void all_reduce_max(torch::Tensor& tensor, const char* what);
    // Copies `root`'s tensor into every rank's, in place.
    void broadcast(torch::Tensor& tensor, int root, const char* what);

    // A value rank 0 publishes for the others (the run's id in the database).
    void publish(const std::string& key, const std::string& value);
    std::string fetch(const std::string& key);

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

}  // namespace oomlab::distributed
