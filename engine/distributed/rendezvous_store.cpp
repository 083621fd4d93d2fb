#include "oomlab/distributed/rendezvous_store.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <condition_variable>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include "oomlab/launch/exit_code.h"

namespace oomlab::distributed {
namespace {

// While any watched wait is in progress, the process ends through on_terminate_while_joining.
// A handler has no arguments: what it says is kept here.
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

void begin_watch(const std::string& where) {
    const std::lock_guard<std::mutex> lock(g_joins_mutex);
    std::snprintf(g_join_failure, sizeof g_join_failure,
                  "%s answered as no rendezvous store does: is another program listening on "
                  "that port?",
                  where.c_str());
    if (g_joins++ == 0) {
        g_before_joins = std::set_terminate(on_terminate_while_joining);
    }
}

// Not called for a wait given up on: its thread is still in c10d, and the process is ending.
void end_watch() {
    const std::lock_guard<std::mutex> lock(g_joins_mutex);
    if (--g_joins == 0) {
        std::set_terminate(g_before_joins);
    }
}

// The one piece of work in progress, shared with its thread: work given up on leaves that
// thread behind, and it must find this alive when it wakes.
struct WatchState {
    std::mutex mutex;
    std::condition_variable done_changed;
    bool done = false;
    std::exception_ptr error;
};

}  // namespace

c10::intrusive_ptr<c10d::Store> connect_store(const Rendezvous& rendezvous,
                                              std::chrono::milliseconds timeout, bool serve) {
    c10d::TCPStoreOptions options;
    options.port = static_cast<std::uint16_t>(rendezvous.master_port);
    options.isServer = serve && rendezvous.rank == 0 && !rendezvous.join_agent_store;
    options.numWorkers = static_cast<std::size_t>(rendezvous.world_size);
    options.waitWorkers = false;
    options.timeout = timeout;
    auto tcp = c10::make_intrusive<c10d::TCPStore>(rendezvous.master_addr, options);
    // Keys of one attempt of a restarted torchrun group never meet the next one's.
    return c10::make_intrusive<c10d::PrefixStore>(
        "oomlab/attempt_" + std::to_string(rendezvous.restart_count), tcp);
}

Watched run_watched(const std::string& where, std::function<void()> work,
                    Clock::time_point deadline, const std::atomic<bool>* cancel,
                    const std::function<void()>& poll) {
    begin_watch(where);
    auto state = std::make_shared<WatchState>();
    std::thread worker([state, work = std::move(work)] {
        std::exception_ptr error;
        try {
            work();
        } catch (...) {
            error = std::current_exception();
        }
        const std::lock_guard<std::mutex> lock(state->mutex);
        state->error = error;
        state->done = true;
        state->done_changed.notify_all();
    });
    constexpr auto kPoll = std::chrono::milliseconds(50);
    std::unique_lock<std::mutex> lock(state->mutex);
    while (!state->done) {
        Watched ended = Watched::Done;
        if (cancel && cancel->load()) {
            ended = Watched::Stopped;
        } else if (Clock::now() >= deadline) {
            ended = Watched::TimedOut;
        } else if (poll) {
            lock.unlock();
            try {
                poll();
            } catch (...) {
                worker.detach();
                throw;
            }
            lock.lock();
        }
        if (ended != Watched::Done) {
            lock.unlock();
            worker.detach();
            return ended;
        }
        if (!state->done) {
            state->done_changed.wait_for(lock, kPoll);
        }
    }
    lock.unlock();
    worker.join();
    end_watch();
    if (state->error) {
        std::rethrow_exception(state->error);
    }
    return Watched::Done;
}

}  // namespace oomlab::distributed
