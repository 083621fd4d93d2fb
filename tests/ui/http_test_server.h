// A server on a port of 127.0.0.1 the system chose, answering each request from a thread of
// its own with what `answer` makes of the request's head (its first line names the method
// and path): a tracker that is always busy, a lecturer serving a lesson file.
#pragma once

#include <QString>
#include <atomic>
#include <functional>
#include <string>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace oomlab::ui::test {

class HttpTestServer {
public:
    using Answer = std::function<std::string(const std::string& head)>;

    explicit HttpTestServer(Answer answer)
        : m_answer(std::move(answer)), m_socket(::socket(AF_INET, SOCK_STREAM, 0)) {
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t length = sizeof address;
        ::bind(m_socket, reinterpret_cast<sockaddr*>(&address), sizeof address);
        ::listen(m_socket, 8);
        ::getsockname(m_socket, reinterpret_cast<sockaddr*>(&address), &length);
        m_port = ntohs(address.sin_port);
        m_thread = std::thread([this] { serve(); });
    }
    ~HttpTestServer() {
        m_done = true;
        m_thread.join();
        ::close(m_socket);
    }
    QString uri() const { return QStringLiteral("http://127.0.0.1:%1").arg(m_port); }
    int answered() const { return m_answered; }

    // An answer of `status` ("200 OK") with `body` and the connection closed after it.
    static std::string reply(const std::string& status, const std::string& body,
                             const std::string& headers = {}) {
        return "HTTP/1.1 " + status + "\r\n" + headers +
               "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" +
               body;
    }

private:
    void serve() {
        while (!m_done) {
            pollfd waiting{m_socket, POLLIN, 0};
            if (::poll(&waiting, 1, 100) <= 0) {
                continue;
            }
            const int client = ::accept(m_socket, nullptr, nullptr);
            // The request's head (the requests answered here are GETs, which have no body).
            std::string request;
            char chunk[4096];
            while (request.find("\r\n\r\n") == std::string::npos) {
                const ssize_t got = ::read(client, chunk, sizeof chunk);
                if (got <= 0) {
                    break;
                }
                request.append(chunk, std::size_t(got));
            }
            const std::string answer = m_answer(request);
            [[maybe_unused]] const ssize_t sent = ::write(client, answer.data(), answer.size());
            ::close(client);
            ++m_answered;
        }
    }

    Answer m_answer;
    int m_socket;
    int m_port = 0;
    std::atomic<bool> m_done{false};
    std::atomic<int> m_answered{0};
    std::thread m_thread;
};

}  // namespace oomlab::ui::test
