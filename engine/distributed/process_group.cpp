#include "distributed/process_group.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>  // compat::CollectiveBackend, complete
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
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
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "oomlab/workers/exit_code.h"
#include "torch_utils/torch_compat.h"

namespace oomlab::distributed {
namespace {

using Clock = std::chrono::steady_clock;
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
    std::string backend_name;
    std::chrono::seconds timeout;
    c10::intrusive_ptr<c10d::Store> store;
    c10::intrusive_ptr<compat::CollectiveBackend> group;

    // Runs one collective on `tensor` to its end, or turns its failure into CollectiveFailed.
    template <typename Start>
    void run(const char* what, Start start, torch::Tensor& tensor) const {
        std::vector<torch::Tensor> tensors{tensor};  // c10d takes one tensor per device
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
        return CollectiveFailed("rank " + std::to_string(rendezvous.rank) + " of " +
                                std::to_string(rendezvous.world_size) + ": " + what + how +
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
    return CollectiveFailed("rank " + std::to_string(rendezvous.rank) +
                            ": cannot reach the rendezvous at " + rendezvous.master_addr + ":" +
                            std::to_string(rendezvous.master_port) +
                            " (MASTER_ADDR, MASTER_PORT): " + why);
}

// The rendezvous store and the backend's group, as c10d makes them; `store_reached` is set
// once the store answers. Blocks until every rank has arrived (or c10d's own timeout), and,
// with a program on the port that is not a store, possibly for ever: see ProcessGroup's
// constructor.
Joined join_group(const Rendezvous& rendezvous, const std::string& backend_name,
                  std::chrono::seconds timeout, std::atomic<bool>& store_reached) {
    Joined joined;
    try {
        c10d::TCPStoreOptions options;
        options.port = static_cast<std::uint16_t>(rendezvous.master_port);
        options.isServer = rendezvous.rank == 0 && !rendezvous.join_agent_store;
        options.numWorkers = static_cast<std::size_t>(rendezvous.world_size);
        options.waitWorkers = false;
        options.timeout = timeout;
        auto tcp = c10::make_intrusive<c10d::TCPStore>(rendezvous.master_addr, options);
        // Keys of one attempt of a restarted torchrun group never meet the next one's.
        joined.store = c10::make_intrusive<c10d::PrefixStore>(
            "oomlab/attempt_" + std::to_string(rendezvous.restart_count), tcp);
    } catch (const std::exception& error) {
        throw unreachable(rendezvous, compat::message_of(error));
    }
    store_reached = true;
    if (backend_name == "gloo") {
#if OOMLAB_HAS_GLOO
        auto options = c10d::ProcessGroupGloo::Options::create(timeout);
        options->devices.push_back(
            c10d::ProcessGroupGloo::createDeviceForHostname(rendezvous.master_addr));
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

// The one join in progress, shared with the thread that makes it: a join given up on leaves
// that thread behind, blocked in c10d, and it must find its state alive when it wakes.
struct JoinState {
    std::mutex mutex;
    std::condition_variable done_changed;
    bool done = false;
    std::atomic<bool> store_reached{false};
    Joined joined;
    std::exception_ptr error;
};

// While any join is in progress, the process ends through on_terminate_while_joining. A
// handler has no arguments: what it says is kept here.
std::mutex g_joins_mutex;
int g_joins = 0;
std::terminate_handler g_before_joins = nullptr;
char g_join_failure[512];

// LibTorch 1.13's store client reads replies on a thread of its own and lets an exception
// there end the process (a program on MASTER_PORT streaming bytes that are no reply makes it
// allocate without bound). What ends the process then is said as what it is.
[[noreturn]] void on_terminate_while_joining() {
    std::string why = "an unexpected error";
    try {
        if (const std::exception_ptr error = std::current_exception()) {
            std::rethrow_exception(error);
        }
    } catch (const std::exception& error) {
        why = error.what();
    } catch (...) {
    }
    std::fprintf(stderr, "error: %s (%s)\n", g_join_failure, why.c_str());
    std::fflush(stderr);
    std::_Exit(kExitFailure);
}

void begin_join(const std::string& where) {
    const std::lock_guard<std::mutex> lock(g_joins_mutex);
    std::snprintf(g_join_failure, sizeof g_join_failure,
                  "%s answered as no rendezvous store does: is another program listening on "
                  "that port?",
                  where.c_str());
    if (g_joins++ == 0) {
        g_before_joins = std::set_terminate(on_terminate_while_joining);
    }
}

// Not called for a join given up on: its thread is still in c10d, and the process is ending.
void end_join() {
    const std::lock_guard<std::mutex> lock(g_joins_mutex);
    if (--g_joins == 0) {
        std::set_terminate(g_before_joins);
    }
}

}  // namespace

ProcessGroup::ProcessGroup(const Rendezvous& rendezvous, DistributedBackend backend,
                           const torch::Device& device, std::chrono::seconds timeout,
                           const std::atomic<bool>* cancel)
    : m_impl(std::make_unique<Impl>()) {
    Impl& impl = *m_impl;
    impl.rendezvous = rendezvous;
    impl.backend_name = backend_for(backend, device);
    impl.timeout = timeout;
    const Clock::time_point started = Clock::now();
    compat::quiet_library_logging();  // each failure below is reported once, as an error
    const std::string where =
        "rank " + std::to_string(rendezvous.rank) + " of " + std::to_string(rendezvous.world_size) +
        ": the rendezvous at " + rendezvous.master_addr + ":" +
        std::to_string(rendezvous.master_port) + " (MASTER_ADDR, MASTER_PORT)";
    begin_join(where);

    // c10d's wait for the others is bounded by `timeout`, but a program on the port that is
    // not a store can hold its client for ever, and a stop (SIGINT, SIGTERM) must not wait
    // for the others at all: the join runs on a thread of its own, watched from here.
    auto state = std::make_shared<JoinState>();
    std::thread joiner([state, rendezvous, name = impl.backend_name, timeout] {
        Joined joined;
        std::exception_ptr error;
        try {
            joined = join_group(rendezvous, name, timeout, state->store_reached);
        } catch (...) {
            error = std::current_exception();
        }
        const std::lock_guard<std::mutex> lock(state->mutex);
        state->joined = std::move(joined);
        state->error = error;
        state->done = true;
        state->done_changed.notify_all();
    });
    const std::string joining =
        "joining the process group through the rendezvous at " + rendezvous.master_addr + ":" +
        std::to_string(rendezvous.master_port) + " (MASTER_ADDR, MASTER_PORT)";
    constexpr auto kPoll = std::chrono::milliseconds(50);
    constexpr auto kGrace = std::chrono::seconds(1);  // c10d's own timeout speaks first
    const Clock::time_point deadline = started + timeout + kGrace;
    std::unique_lock<std::mutex> lock(state->mutex);
    while (!state->done) {
        if (cancel && cancel->load()) {
            lock.unlock();
            joiner.detach();
            throw Cancelled();
        }
        if (Clock::now() >= deadline) {
            lock.unlock();
            joiner.detach();
            // Said as c10d says its own timeout at that stage, whichever of the two comes first.
            const std::string none = "no answer within " + std::to_string(timeout.count()) +
                                     " s (distributed.timeout_s): the other processes did not "
                                     "arrive, or another program holds that port";
            if (!state->store_reached) {
                throw unreachable(rendezvous, none);
            }
            throw impl.failure(joining, std::runtime_error("or another program holds that port"),
                               started);
        }
        state->done_changed.wait_for(lock, kPoll);
    }
    lock.unlock();
    joiner.join();
    end_join();
    if (state->error) {
        try {
            std::rethrow_exception(state->error);
        } catch (const Error&) {
            throw;
        } catch (const std::exception& error) {
            throw impl.failure(joining, error, started);
        }
    }
    impl.store = std::move(state->joined.store);
    impl.group = std::move(state->joined.group);
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
