// Which address of this machine the other ranks reach this rank at.
#pragma once

#include <string>
#include <vector>

#include "oomlab/launch/rendezvous.h"

namespace oomlab::distributed {

// "rank 1 of 2 on node-b (10.0.0.2)": this process, its machine's name and the address facing
// rank 0, as every message about a rank names it (the address is left out where no route leads
// to rank 0's host, the machine's name where the system has none).
std::string rank_and_host(const Rendezvous& rendezvous);

// The address of this machine that the route to `host` leaves from: on a machine with several
// interfaces (a cluster's fast network beside its management one, a test host's veth) the one
// that faces rank 0; 127.0.0.1 when `host` is this machine. Nothing is sent. Throws Error
// when `host` cannot be found or no route leads to it.
std::string local_address_towards(const std::string& host, int port);

// The interfaces GLOO_SOCKET_IFNAME names (comma separated), each checked to be one of this
// machine's; throws BadInput naming the variable and the machine's interfaces otherwise (Gloo
// itself failed after the rendezvous with its own enforce text). Empty when it is not set.
std::vector<std::string> gloo_interfaces();

}  // namespace oomlab::distributed
