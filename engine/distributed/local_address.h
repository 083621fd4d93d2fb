// Which address of this machine the other ranks reach this rank at.
#pragma once

#include <string>

namespace oomlab::distributed {

// The address of this machine that the route to `host` leaves from: on a machine with several
// interfaces (a cluster's fast network beside its management one, a test host's veth) the one
// that faces rank 0; 127.0.0.1 when `host` is this machine. Nothing is sent. Throws Error
// when `host` cannot be found or no route leads to it.
std::string local_address_towards(const std::string& host, int port);

}  // namespace oomlab::distributed
