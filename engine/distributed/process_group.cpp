#include "oomlab/distributed/process_group.h"

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>  // compat::CollectiveBackend, complete
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>
// Gloo needs its own headers (Debian's libgloo-dev); NCCL a CUDA build of LibTorch.
#if defined(USE_C10D_GLOO) && __has_include(<gloo/config.h>)
#define OOMLAB_HAS_GLOO 1
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#else
#define OOMLAB_HAS_GLOO 0
#endif
#if OOMLAB_WITH_CUDA && defined(USE_C10D_NCCL)
#define OOMLAB_HAS_NCCL 1
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#else
#define OOMLAB_HAS_NCCL 0
#endif

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "local_address.h"
#include "oomlab/distributed/refusals.h"
#include "oomlab/distributed/rendezvous_store.h"
#include "oomlab/torch_utils/torch_compat.h"

namespace oomlab::distributed {
namespace {

constexpr auto kReleaseWait = std::chrono::milliseconds(100);

std::string backend_for(DistributedBackend backend, const torch::Device& device) {
    switch (backend) {
        case DistributedBackend::Gloo:
            return "gloo";
        case DistributedBackend::Nccl:
            if (!device.is_cuda()) {
                throw BadInput("distributed.backend=nccl needs a CUDA device (device=" +
                                   device.str() + "); use gloo, or auto, on the CPU",
                               {"distributed.backend"});
            }
            return "nccl";
        case DistributedBackend::Auto:
            break;
    }
    return device.is_cuda() ? "nccl" : "gloo";
}

}  // namespace

struct ProcessGroup::Impl {
    Rendezvous rendezvous;
    std::string label;  // rank_and_host(), found before anything can fail
    std::string backend_name;
    torch::Device device = torch::kCPU;  // where NCCL's collectives run
    std::chrono::seconds timeout;
    c10::intrusive_ptr<c10d::Store> store;
    c10::intrusive_ptr<compat::CollectiveBackend> group;

    // Runs one collective on `tensor` to its end, or turns its failure into CollectiveFailed.
    template <typename Start>
    void run(const char* what, Start start, torch::Tensor& tensor) const {
        // NCCL reduces device tensors only: a host tensor (a flag the ranks agree on) goes
        // through the device and back.
        const bool staged = backend_name == "nccl" && !tensor.is_cuda();
        torch::Tensor moved = staged ? tensor.to(device) : tensor;
        std::vector<torch::Tensor> tensors{moved};  // c10d takes one tensor per device
        c10::intrusive_ptr<c10d::Work> work;
        const Clock::time_point started = Clock::now();
        try {
            work = start(tensors);
            work->wait(timeout);
        } catch (const std::exception& error) {
            throw failure(what, error, started);
        }
        // The backend's worker thread lets go of the work, and so of the tensor, just after
        // waking us. Waiting for that makes the tensor's memory free when the caller frees its
        // own reference, so a bucket never lingers into the next phase's peak.
        const auto deadline = Clock::now() + kReleaseWait;
        while (work.use_count() > 1 && Clock::now() < deadline) {
            std::this_thread::yield();
        }
        if (staged) {
            tensor.copy_(moved);
        }
    }

    void all_reduce(torch::Tensor& tensor, c10d::ReduceOp::RedOpType op, const char* what) const {
        c10d::AllreduceOptions options;
        options.reduceOp = op;
        run(
            what,
            [&](std::vector<torch::Tensor>& tensors) { return group->allreduce(tensors, options); },
            tensor);
    }

    // A wait that ran out says so; one a peer broke (its connection reset) says when.
    CollectiveFailed failure(const std::string& what, const std::exception& error,
                             Clock::time_point started) const {
        std::string message = compat::message_of(error);
        message = message.substr(0, message.find('\n'));
        const auto waited = std::chrono::duration<double>(Clock::now() - started);
        char after[32];
        std::snprintf(after, sizeof after, "%.1f", waited.count());
        const std::string how = waited + std::chrono::milliseconds(500) >= timeout
                                    ? " did not complete within " +
                                          std::to_string(timeout.count()) +
                                          " s (distributed.timeout_s)"
                                    : std::string(" failed after ") + after + " s";
        return CollectiveFailed(label + ": " + what + how +
                                ": another process of the run ended, failed or stopped "
                                "responding (" +
                                message + ")");
    }
};

namespace {

// What a join makes; filled by the joining thread.
struct Joined {
    c10::intrusive_ptr<c10d::Store> store;
    c10::intrusive_ptr<compat::CollectiveBackend> group;
};

// The rendezvous's store could not be reached (`why`), by c10d's own account or the watch's.
CollectiveFailed unreachable(const Rendezvous& rendezvous, const std::string& why) {
    return CollectiveFailed(rank_and_host(rendezvous) + ": cannot reach the rendezvous at " +
                            rendezvous.master_addr + ":" + std::to_string(rendezvous.master_port) +
                            " (MASTER_ADDR, MASTER_PORT): " + why);
}

#if OOMLAB_HAS_GLOO
// Where Gloo listens for the other ranks: the interfaces GLOO_SOCKET_IFNAME names (comma
// separated), as torch.distributed reads it; else the address facing rank 0's host (MASTER_ADDR
// is that host's, not this one's, on every other machine).
std::vector<std::shared_ptr<::gloo::transport::Device>> gloo_devices(const Rendezvous& rendezvous) {
    std::vector<std::shared_ptr<::gloo::transport::Device>> devices;
    for (const std::string& name : gloo_interfaces()) {
        devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(name));
    }
    if (devices.empty()) {
        try {
            devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(
                local_address_towards(rendezvous.master_addr, rendezvous.master_port)));
        } catch (const Error& error) {
            throw unreachable(rendezvous, error.what());
        }
    }
    return devices;
}
#endif

// The rendezvous store and the backend's group, as c10d makes them; `store_reached` is set
// once the store answers. Blocks until every rank has arrived (or c10d's own timeout), and,
// with a program on the port that is not a store, possibly for ever: see ProcessGroup's
// constructor.
Joined join_group(const Rendezvous& rendezvous, const std::string& backend_name,
                  std::chrono::seconds timeout, std::atomic<bool>& store_reached) {
    Joined joined;
    try {
        joined.store = connect_store(rendezvous, timeout, /*serve=*/true);
    } catch (const std::exception& error) {
        throw unreachable(rendezvous, compat::message_of(error));
    }
    store_reached = true;
    if (backend_name == "gloo") {
#if OOMLAB_HAS_GLOO
        auto options = c10d::ProcessGroupGloo::Options::create(timeout);
        options->devices = gloo_devices(rendezvous);
        joined.group = c10::make_intrusive<c10d::ProcessGroupGloo>(joined.store, rendezvous.rank,
                                                                   rendezvous.world_size, options);
#else
        throw BadInput("this build of LibTorch has no Gloo backend; use distributed.backend=nccl",
                       {"distributed.backend"});
#endif
    } else {
#if OOMLAB_HAS_NCCL
        auto options = c10d::ProcessGroupNCCL::Options::create();
        options->timeout = timeout;
        joined.group = c10::make_intrusive<c10d::ProcessGroupNCCL>(joined.store, rendezvous.rank,
                                                                   rendezvous.world_size, options);
#else
        throw BadInput(
            "this build has no NCCL backend (LibTorch without CUDA or NCCL); use "
            "distributed.backend=gloo",
            {"distributed.backend"});
#endif
    }
    return joined;
}

// What the joining thread reaches, shared with it: a join given up on leaves that thread
// behind, blocked in c10d, and it must find this alive when it wakes.
struct JoinProgress {
    std::atomic<bool> store_reached{false};
    Joined joined;
};

}  // namespace

ProcessGroup::ProcessGroup(const Rendezvous& rendezvous, DistributedBackend backend,
                           const torch::Device& device, std::chrono::seconds timeout,
                           const std::atomic<bool>* cancel)
    : m_impl(std::make_unique<Impl>()) {
    Impl& impl = *m_impl;
    impl.rendezvous = rendezvous;
    impl.backend_name = backend_for(backend, device);
    impl.device = device;
    impl.timeout = timeout;
    const Clock::time_point started = Clock::now();
    compat::quiet_library_logging();  // each failure below is reported once, as an error
    impl.label = rank_and_host(rendezvous);
    if (impl.backend_name == "gloo") {
        gloo_interfaces();  // a name this machine lacks is refused before any rank waits
    }
    const std::string where = impl.label + ": the rendezvous at " + rendezvous.master_addr + ":" +
                              std::to_string(rendezvous.master_port) +
                              " (MASTER_ADDR, MASTER_PORT)";
    note_join_started();

    // c10d's wait for the others is bounded by `timeout`, but a program on the port that is
    // not a store can hold its client for ever, a stop (SIGINT, SIGTERM) must not wait for
    // the others at all, and a rank that refused its settings before joining never comes:
    // the join runs on a thread of its own, watched from here.
    const auto join_watched = [&] {
        auto progress = std::make_shared<JoinProgress>();
        const auto join = [progress, rendezvous, name = impl.backend_name, timeout] {
            progress->joined = join_group(rendezvous, name, timeout, progress->store_reached);
        };
        RefusalWatch refusals(rendezvous);
        const auto watch_refusals = [&] {
            if (progress->store_reached) {
                refusals.start();
                refusals.throw_if_refused();
            }
        };
        const std::string joining =
            "joining the process group through the rendezvous at " + rendezvous.master_addr + ":" +
            std::to_string(rendezvous.master_port) + " (MASTER_ADDR, MASTER_PORT)";
        constexpr auto kGrace = std::chrono::seconds(1);  // c10d's own timeout speaks first
        Watched ended = Watched::Done;
        try {
            ended = run_watched(where, join, started + timeout + kGrace, cancel, watch_refusals);
        } catch (const Error&) {
            throw;
        } catch (const std::exception& error) {
            refusals.throw_if_refused();  // the store that broke the join said why first
            throw impl.failure(joining, error, started);
        }
        if (ended == Watched::Stopped) {
            throw Cancelled();
        }
        if (ended == Watched::TimedOut) {
            // Said as c10d says its own timeout at that stage, whichever of the two comes first.
            const std::string none = "no answer within " + std::to_string(timeout.count()) +
                                     " s (distributed.timeout_s): the other processes did not "
                                     "arrive, or another program holds that port";
            if (!progress->store_reached) {
                throw unreachable(rendezvous, none);
            }
            throw impl.failure(joining, std::runtime_error("or another program holds that port"),
                               started);
        }
        refusals.finish();
        impl.store = std::move(progress->joined.store);
        impl.group = std::move(progress->joined.group);
    };
    try {
        join_watched();
    } catch (const CollectiveFailed& failed) {
        if (!rendezvous.join_agent_store) {
            throw;
        }
        // torchrun's agent serves the store: one of another PyTorch than this LibTorch does
        // not answer its client (1.13's and 2.x's differ), which looks like ranks that never
        // come.
        throw CollectiveFailed(std::string(failed.what()) +
                               "; under torchrun this is also what a torchrun of another "
                               "PyTorch than oomlab-cli's LibTorch (" +
                               std::to_string(TORCH_VERSION_MAJOR) + "." +
                               std::to_string(TORCH_VERSION_MINOR) +
                               ") looks like: their stores do not talk to each other, so run "
                               "the torchrun of that version");
    }
}

ProcessGroup::~ProcessGroup() = default;

int ProcessGroup::rank() const {
    return m_impl->rendezvous.rank;
}

int ProcessGroup::world_size() const {
    return m_impl->rendezvous.world_size;
}

const std::string& ProcessGroup::backend_name() const {
    return m_impl->backend_name;
}

void ProcessGroup::all_reduce_sum(torch::Tensor& tensor, const char* what) {
    m_impl->all_reduce(tensor, c10d::ReduceOp::SUM, what);
}

void ProcessGroup::all_reduce_max(torch::Tensor& tensor, const char* what) {
    m_impl->all_reduce(tensor, c10d::ReduceOp::MAX, what);
}

void ProcessGroup::broadcast(torch::Tensor& tensor, int root, const char* what) {
    c10d::BroadcastOptions options;
    options.rootRank = root;
    m_impl->run(
        what,
        [&](std::vector<torch::Tensor>& tensors) {
            return m_impl->group->broadcast(tensors, options);
        },
        tensor);
}

void ProcessGroup::publish(const std::string& key, const std::string& value) {
    const Clock::time_point started = Clock::now();
    try {
        m_impl->store->set(key, std::vector<std::uint8_t>(value.begin(), value.end()));
    } catch (const std::exception& error) {
        throw m_impl->failure("publishing to the rendezvous store", error, started);
    }
}

std::string ProcessGroup::fetch(const std::string& key) {
    const Clock::time_point started = Clock::now();
    try {
        const std::vector<std::uint8_t> value = m_impl->store->get(key);
        return std::string(value.begin(), value.end());
    } catch (const std::exception& error) {
        throw m_impl->failure("reading from the rendezvous store", error, started);
    }
}

}  // namespace oomlab::distributed
