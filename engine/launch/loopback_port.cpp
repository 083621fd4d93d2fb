// The rendezvous port of local workers. A port is only known free when it is checked; rank 0
// binds it a while later, after it has read the data. A port of the range the kernel hands
// to outgoing connections (ip_local_port_range) could be taken meanwhile by any connection
// of this machine, the other runs' own Gloo connections among them; a port below that range
// is only ever taken by a program that asks for it by number.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>

#include "oomlab/common/errors.h"
#include "oomlab/launch/rendezvous.h"

namespace oomlab {
namespace {

constexpr int kLowestPort = 10000;  // below: well-known and commonly configured services
constexpr int kTries = 64;

// The first port the kernel picks for outgoing connections (Linux's default when unreadable).
int first_ephemeral_port() {
    std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
    int low = 0;
    int high = 0;
    return range >> low >> high && low > 0 ? low : 32768;
}

// Binds `port` on 127.0.0.1 (0: any) and returns the port bound, or 0.
int bind_loopback(int port) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        throw Error(std::string("cannot open a socket to find a free port: ") +
                    std::strerror(errno));
    }
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    socklen_t length = sizeof address;
    const bool bound = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                       getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
    close(fd);
    return bound ? ntohs(address.sin_port) : 0;
}

}  // namespace

int free_loopback_port() {
    const int below = first_ephemeral_port();
    if (below > kLowestPort) {
        std::random_device seed;
        std::uniform_int_distribution<int> pick(kLowestPort, below - 1);
        for (int attempt = 0; attempt < kTries; ++attempt) {
            if (const int port = bind_loopback(pick(seed))) {
                return port;
            }
        }
    }
    if (const int port = bind_loopback(0)) {  // a machine whose range starts low
        return port;
    }
    throw Error(std::string("cannot find a free port on 127.0.0.1: ") + std::strerror(errno));
}

}  // namespace oomlab
