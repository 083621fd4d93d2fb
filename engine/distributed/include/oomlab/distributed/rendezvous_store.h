// The rendezvous's store as torch.distributed's env:// makes it, and a wait on c10d that does
// not trust it to return: what answers on MASTER_PORT may be no store at all, and a stop
// (SIGINT, SIGTERM) must not wait for the other processes.
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>

#include "oomlab/launch/rendezvous.h"

namespace oomlab::distributed {

using Clock = std::chrono::steady_clock;

// This attempt's keys of the rendezvous's store. Rank 0 serves it when `serve` is set and
// torchrun's agent does not; every other process is a client. Throws what c10d throws.
c10::intrusive_ptr<c10d::Store> connect_store(const Rendezvous& rendezvous,
                                              std::chrono::milliseconds timeout, bool serve);

enum class Watched { Done, Stopped, TimedOut };

// Runs `work` on a thread of its own and waits until it ends (its exception rethrown), until
// `deadline`, or until `cancel` is set; meanwhile `poll` is called about every 50 ms, and what
// it throws ends the wait. A thread not waited for is left behind, blocked in c10d, with its
// state kept alive. `where` names the rendezvous in the message of a process that LibTorch's
// store client ends (see the .cpp).
Watched run_watched(const std::string& where, std::function<void()> work,
                    Clock::time_point deadline, const std::atomic<bool>* cancel,
                    const std::function<void()>& poll = {});

}  // namespace oomlab::distributed
