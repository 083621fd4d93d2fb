#include "foreign_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

namespace oomlab::test {

ForeignServer::ForeignServer(Behaviour behaviour) : m_behaviour(behaviour) {
    m_listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (m_listener < 0 || bind(m_listener, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
        listen(m_listener, 16) != 0 ||
        getsockname(m_listener, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
        throw std::runtime_error(std::string("foreign server: ") + std::strerror(errno));
    }
    m_port = ntohs(address.sin_port);
    m_thread = std::thread([this] { serve(); });
}

ForeignServer::~ForeignServer() {
    m_stop = true;
    m_thread.join();
    close(m_listener);
    for (int connection : m_connections) {
        close(connection);
    }
}

void ForeignServer::serve() {
    std::vector<char> bytes(4096, static_cast<char>(0xff));
    while (!m_stop) {
        pollfd ready{m_listener, POLLIN, 0};
        if (poll(&ready, 1, 50) > 0) {
            const int connection = accept4(m_listener, nullptr, nullptr, SOCK_CLOEXEC);
            if (connection >= 0) {
                if (m_behaviour == Behaviour::EightBytesThenHold) {
                    (void)!send(connection, "\x01\x01\x01\x01\x01\x01\x01\x01", 8, MSG_NOSIGNAL);
                }
                m_connections.push_back(connection);
                ++m_accepted;
            }
        }
        if (m_behaviour == Behaviour::StreamFf) {
            for (int connection : m_connections) {
                (void)!send(connection, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
            }
        }
    }
}

}  // namespace oomlab::test
