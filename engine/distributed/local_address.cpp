#include "local_address.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "oomlab/common/errors.h"

namespace oomlab::distributed {

std::string local_address_towards(const std::string& host, int port) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_DGRAM;
    addrinfo* found = nullptr;
    const std::string service = std::to_string(port);
    if (const int error = getaddrinfo(host.c_str(), service.c_str(), &hints, &found)) {
        throw Error("cannot find the host \"" + host + "\" of rank 0 (" + gai_strerror(error) +
                    ")");
    }
    std::string reason = "no address";
    for (const addrinfo* address = found; address; address = address->ai_next) {
        const int fd = socket(address->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            reason = std::strerror(errno);
            continue;
        }
        // Connecting a datagram socket only picks the route (and so the local address).
        sockaddr_storage local{};
        socklen_t length = sizeof local;
        const bool routed = connect(fd, address->ai_addr, address->ai_addrlen) == 0 &&
                            getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) == 0;
        reason = routed ? reason : std::strerror(errno);
        close(fd);
        if (!routed) {
            continue;
        }
        char text[INET6_ADDRSTRLEN] = {};
        const void* bytes =
            local.ss_family == AF_INET6
                ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&local)->sin6_addr)
                : static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&local)->sin_addr);
        if (inet_ntop(local.ss_family, bytes, text, sizeof text)) {
            freeaddrinfo(found);
            return text;
        }
    }
    freeaddrinfo(found);
    throw Error("no route from this machine to \"" + host + "\", the host of rank 0 (" + reason +
                ")");
}

std::string rank_and_host(const Rendezvous& rendezvous) {
    std::string label =
        "rank " + std::to_string(rendezvous.rank) + " of " + std::to_string(rendezvous.world_size);
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) == 0 && host[0] != '\0') {
        label += std::string(" on ") + host;
    }
    try {
        label += " (" + local_address_towards(rendezvous.master_addr, rendezvous.master_port) + ")";
    } catch (const Error&) {
        // No route to rank 0's host: the message goes on to say why.
    }
    return label;
}

std::vector<std::string> gloo_interfaces() {
    const char* value = std::getenv("GLOO_SOCKET_IFNAME");
    std::vector<std::string> names;
    std::stringstream list(value ? value : "");
    for (std::string name; std::getline(list, name, ',');) {
        if (name.empty()) {
            continue;
        }
        if (if_nametoindex(name.c_str()) == 0) {
            std::string known;
            if (struct if_nameindex* all = if_nameindex()) {
                for (struct if_nameindex* at = all; at->if_index != 0; ++at) {
                    known += (known.empty() ? "" : ", ") + std::string(at->if_name);
                }
                if_freenameindex(all);
            }
            throw BadInput("environment variable GLOO_SOCKET_IFNAME is \"" + std::string(value) +
                           "\": this machine has no network interface \"" + name + "\" (it has: " +
                           known + "); name one of them, or unset it to use the one facing rank 0");
        }
        names.push_back(name);
    }
    return names;
}

}  // namespace oomlab::distributed
