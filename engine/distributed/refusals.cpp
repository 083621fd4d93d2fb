#include "oomlab/distributed/refusals.h"

#include <atomic>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "local_address.h"
#include "oomlab/common/errors.h"

namespace oomlab::distributed {
namespace {

std::atomic<bool> g_join_started{false};

std::string refusal_key(int rank) {
    return "refused_before_joining/" + std::to_string(rank);
}

// How many ranks have read a refusal.
constexpr const char* kSeenKey = "refusals_read";

}  // namespace

void note_join_started() {
    g_join_started = true;
}

void announce_refusal(const Rendezvous& rendezvous, const std::string& why,
                      std::chrono::seconds timeout) {
    if (g_join_started || rendezvous.world_size < 2) {
        return;
    }
    const Clock::time_point deadline = Clock::now() + timeout;
    const std::string where = rank_and_host(rendezvous) + ": the rendezvous at " +
                              rendezvous.master_addr + ":" + std::to_string(rendezvous.master_port);
    const auto tell = [rendezvous, why, timeout, deadline] {
        const auto store = connect_store(rendezvous, timeout, /*serve=*/true);
        store->set(refusal_key(rendezvous.rank), std::vector<std::uint8_t>(why.begin(), why.end()));
        if (rendezvous.rank != 0 || rendezvous.join_agent_store) {
            return;  // the store lives on without this process
        }
        // This process serves the store: it stays until the others have read the refusal.
        while (Clock::now() < deadline) {
            std::int64_t answered = store->add(kSeenKey, 0);
            for (int other = 1; other < rendezvous.world_size; ++other) {
                answered += store->check({refusal_key(other)}) ? 1 : 0;
            }
            if (answered >= rendezvous.world_size - 1) {
                return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    };
    try {
        run_watched(where, tell, deadline + std::chrono::seconds(1), nullptr);
    } catch (const std::exception&) {
        // Telling the others is a courtesy; this rank's own refusal is what it reports.
    }
}

struct RefusalWatch::State {
    std::atomic<bool> stop{false};
    mutable std::mutex mutex;
    std::optional<std::string> refusal;  // "rank N refused ...", once seen
};

void RefusalWatch::start() {
    if (m_state) {
        return;
    }
    m_state = std::make_shared<State>();
    m_thread = std::thread([state = m_state, rendezvous = m_rendezvous] {
        c10::intrusive_ptr<c10d::Store> store;
        while (!state->stop) {
            try {
                if (!store) {
                    store = connect_store(rendezvous, std::chrono::seconds(1), /*serve=*/false);
                }
                for (int other = 0; other < rendezvous.world_size; ++other) {
                    const std::string key = refusal_key(other);
                    if (other == rendezvous.rank || !store->check({key})) {
                        continue;
                    }
                    const std::vector<std::uint8_t> value = store->get(key);
                    {
                        const std::lock_guard<std::mutex> lock(state->mutex);
                        state->refusal = "rank " + std::to_string(other) +
                                         " refused its settings, so the run cannot start: " +
                                         std::string(value.begin(), value.end());
                    }
                    // Said read only now: a rank 0 that refused ends its store once every
                    // other rank has read it, which breaks this rank's join.
                    store->add(kSeenKey, 1);
                    return;
                }
            } catch (const std::exception&) {
                store.reset();  // not answering yet: asked again at the next look
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(250));
        }
    });
}

void RefusalWatch::throw_if_refused() const {
    if (!m_state) {
        return;
    }
    const std::lock_guard<std::mutex> lock(m_state->mutex);
    if (m_state->refusal) {
        throw BadInput(*m_state->refusal);
    }
}

void RefusalWatch::finish() {
    if (m_thread.joinable()) {
        m_state->stop = true;
        m_thread.join();
    }
}

RefusalWatch::~RefusalWatch() {
    if (m_thread.joinable()) {
        m_state->stop = true;
        m_thread.detach();
    }
}

}  // namespace oomlab::distributed
