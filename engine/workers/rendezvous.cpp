// The data-parallel environment torchrun and Slurm wrappers set, read strictly: a run that
// half-joins a group would wait for peers that never come.
#include "oomlab/workers/rendezvous.h"

#include <netdb.h>
#include <sys/socket.h>

#include <cstdlib>

#include "config/value_parsing.h"
#include "oomlab/common/errors.h"

namespace oomlab {
namespace {

std::optional<std::string> variable(const char* name) {
    const char* value = std::getenv(name);
    return value && *value ? std::optional<std::string>(value) : std::nullopt;
}

// As torch.distributed's env:// rendezvous: each of these must be set once WORLD_SIZE is.
std::string required_variable(const char* name) {
    const auto value = variable(name);
    if (!value) {
        throw BadInput(std::string("environment variable ") + name +
                       " is not set, but WORLD_SIZE is: set RANK, WORLD_SIZE, MASTER_ADDR and "
                       "MASTER_PORT together (or use oomlab-cli run --nproc N)");
    }
    return *value;
}

int integer_variable(const char* name, double minimum, double maximum) {
    return static_cast<int>(config_detail::parse_integer(
        std::string("environment variable ") + name, required_variable(name), minimum, maximum));
}

// A host no peer can find would only fail after distributed.timeout_s of retries.
void check_resolves(const std::string& host) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const int error = getaddrinfo(host.c_str(), nullptr, &hints, &found);
    if (error != 0) {
        throw BadInput("environment variable MASTER_ADDR: cannot find the host \"" + host + "\" (" +
                       gai_strerror(error) +
                       "); set it to the address or name of the machine of rank 0");
    }
    freeaddrinfo(found);
}

}  // namespace

std::optional<Rendezvous> rendezvous_from_environment() {
    if (!variable("WORLD_SIZE")) {
        return std::nullopt;
    }
    Rendezvous rendezvous;
    rendezvous.world_size = integer_variable("WORLD_SIZE", 1, kMostRanks);
    if (rendezvous.world_size == 1) {
        return std::nullopt;  // a group of one is a plain run
    }
    rendezvous.rank = integer_variable("RANK", 0, rendezvous.world_size - 1);
    rendezvous.local_rank = variable("LOCAL_RANK")
                                ? integer_variable("LOCAL_RANK", 0, rendezvous.world_size - 1)
                                : rendezvous.rank;
    rendezvous.master_addr = required_variable("MASTER_ADDR");
    rendezvous.master_port = integer_variable("MASTER_PORT", 1, 65535);
    check_resolves(rendezvous.master_addr);
    // As torch.distributed's env:// reads them (the agent sets exactly "True").
    rendezvous.join_agent_store = variable("TORCHELASTIC_USE_AGENT_STORE") == "True";
    if (variable("TORCHELASTIC_RESTART_COUNT")) {
        rendezvous.restart_count = integer_variable("TORCHELASTIC_RESTART_COUNT", 0, 1e9);
    }
    return rendezvous;
}

}  // namespace oomlab
