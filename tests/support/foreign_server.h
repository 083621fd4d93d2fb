// A program on a rendezvous port that is not a c10d store, for the tests of what a rank does
// when it meets one: it streams bytes no store sends, sends a few and holds the connection, or
// accepts and says nothing.
#pragma once

#include <atomic>
#include <thread>
#include <vector>

namespace oomlab::test {

class ForeignServer {
public:
    enum class Behaviour { StreamFf, EightBytesThenHold, Silent };

    // Listens on 127.0.0.1 at a port the kernel picks, until destroyed.
    explicit ForeignServer(Behaviour behaviour);
    ~ForeignServer();
    ForeignServer(const ForeignServer&) = delete;
    ForeignServer& operator=(const ForeignServer&) = delete;

    int port() const { return m_port; }
    // Connections accepted so far: a client is connected once this grows.
    int accepted() const { return m_accepted.load(); }

private:
    void serve();

    Behaviour m_behaviour;
    int m_listener = -1;
    int m_port = 0;
    std::atomic<bool> m_stop{false};
    std::atomic<int> m_accepted{0};
    std::vector<int> m_connections;  // the serving thread's
    std::thread m_thread;
};

}  // namespace oomlab::test
