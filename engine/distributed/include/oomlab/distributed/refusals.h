// A rank that refuses its settings before the group exists (a bad value, a missing file)
// tells the others through the rendezvous's store, so they stop at once with its reason
// instead of waiting distributed.timeout_s and blaming a dead peer.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "oomlab/distributed/rendezvous_store.h"

namespace oomlab::distributed {

// Publishes `why` as this rank's refusal. Rank 0, when it serves the store, keeps it until
// every other rank has read the refusal or refused too, up to `timeout`. Does nothing once
// this process has started to join a group (the group's own agreement tells the others).
void announce_refusal(const Rendezvous& rendezvous, const std::string& why,
                      std::chrono::seconds timeout);

// Called when this process starts to join a group.
void note_join_started();

// The other ranks' refusals, read while this rank joins, on a thread of its own: a program on
// the port that is not a store may never answer, and the join's watch must not wait for it.
class RefusalWatch {
public:
    explicit RefusalWatch(const Rendezvous& rendezvous) : m_rendezvous(rendezvous) {}
    ~RefusalWatch();  // leaves a thread that is still asking behind
    RefusalWatch(const RefusalWatch&) = delete;
    RefusalWatch& operator=(const RefusalWatch&) = delete;

    // Starts looking (once); the store is asked about every 250 ms.
    void start();
    // Throws BadInput with the first refusal another rank published, once seen.
    void throw_if_refused() const;
    // Stops looking and waits for the thread: the store answered the join, so it answers.
    void finish();

private:
    struct State;
    Rendezvous m_rendezvous;
    std::shared_ptr<State> m_state;
    std::thread m_thread;
};

}  // namespace oomlab::distributed
