// The data-parallel environment torchrun, Slurm's srun and other wrappers set, read strictly: a
// run that half-joins a group would wait for peers that never come.
#include "oomlab/launch/rendezvous.h"

#include <netdb.h>
#include <sys/socket.h>

#include <cstdint>
#include <cstdlib>

#include "oomlab/common/errors.h"
#include "oomlab/config/value_parsing.h"

namespace oomlab {
namespace {

std::optional<std::string> variable(const char* name) {
    const char* value = std::getenv(name);
    return value && *value ? std::optional<std::string>(value) : std::nullopt;
}

// `why` says which variable made this one necessary, and what to do.
std::string required_variable(const char* name, const std::string& why) {
    const auto value = variable(name);
    if (!value) {
        throw BadInput(std::string("environment variable ") + name + " is not set, but " + why);
    }
    return *value;
}

std::int64_t wide_variable(const char* name, double minimum, double maximum,
                           const std::string& why) {
    return config_detail::parse_integer(std::string("environment variable ") + name,
                                        required_variable(name, why), minimum, maximum);
}

int integer_variable(const char* name, double minimum, double maximum, const std::string& why) {
    return static_cast<int>(wide_variable(name, minimum, maximum, why));
}

// A host no peer can find would only fail after distributed.timeout_s of retries.
void check_resolves(const std::string& host, const std::string& named_by) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const int error = getaddrinfo(host.c_str(), nullptr, &hints, &found);
    if (error != 0) {
        throw BadInput("environment variable " + named_by + ": cannot find the host \"" + host +
                       "\" (" + gai_strerror(error) +
                       "); set MASTER_ADDR to the address or name of the machine of rank 0");
    }
    freeaddrinfo(found);
}

const std::string kEnvWhy =
    "WORLD_SIZE is: set RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT together (or use "
    "oomlab-cli run --nproc N)";

// As torch.distributed's env:// reads them; torchrun sets the same variables.
Rendezvous env_rendezvous(int world_size) {
    Rendezvous rendezvous;
    rendezvous.world_size = world_size;
    rendezvous.rank = integer_variable("RANK", 0, world_size - 1, kEnvWhy);
    // torchrun's LOCAL_WORLD_SIZE bounds LOCAL_RANK: the processes on this machine.
    const int local_world_size = variable("LOCAL_WORLD_SIZE")
                                     ? integer_variable("LOCAL_WORLD_SIZE", 1, world_size, kEnvWhy)
                                     : world_size;
    rendezvous.local_rank = variable("LOCAL_RANK")
                                ? integer_variable("LOCAL_RANK", 0, local_world_size - 1, kEnvWhy)
                                : rendezvous.rank;
    rendezvous.master_addr = required_variable("MASTER_ADDR", kEnvWhy);
    rendezvous.master_port = integer_variable("MASTER_PORT", 1, 65535, kEnvWhy);
    check_resolves(rendezvous.master_addr, "MASTER_ADDR");
    // As torch.distributed's env:// reads them (the agent sets exactly "True").
    rendezvous.join_agent_store = variable("TORCHELASTIC_USE_AGENT_STORE") == "True";
    if (variable("TORCHELASTIC_RESTART_COUNT")) {
        rendezvous.restart_count = integer_variable("TORCHELASTIC_RESTART_COUNT", 0, 1e9, kEnvWhy);
    }
    return rendezvous;
}

const std::string kSlurmWhy =
    "SLURM_STEP_ID is (a job step started by srun): srun sets SLURM_PROCID, SLURM_LOCALID, "
    "SLURM_NTASKS, SLURM_JOB_ID and SLURM_STEP_NODELIST in every task";

// The first node of the step: what srun lists first runs task 0.
std::string slurm_rank_zero_host(std::string* named_by) {
    for (const char* name : {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"}) {
        if (const auto list = variable(name)) {
            *named_by = name;
            return first_slurm_host(*list);
        }
    }
    throw BadInput(
        "environment variable SLURM_STEP_NODELIST is not set, and neither is "
        "MASTER_ADDR: set MASTER_ADDR to the address or name of the machine of task 0");
}

// Under srun, every task of the step is a rank. Where MASTER_ADDR and MASTER_PORT are not set,
// rank 0 is on the step's first node, and the port follows from the job and step, the same in
// every task, below the range of outgoing connections' ports.
Rendezvous slurm_rendezvous(int world_size) {
    Rendezvous rendezvous;
    rendezvous.world_size = world_size;
    rendezvous.rank = integer_variable("SLURM_PROCID", 0, world_size - 1, kSlurmWhy);
    rendezvous.local_rank = integer_variable("SLURM_LOCALID", 0, world_size - 1, kSlurmWhy);
    std::string named_by = "MASTER_ADDR";
    rendezvous.master_addr =
        variable("MASTER_ADDR") ? *variable("MASTER_ADDR") : slurm_rank_zero_host(&named_by);
    check_resolves(rendezvous.master_addr, named_by);
    if (variable("MASTER_PORT")) {
        rendezvous.master_port = integer_variable("MASTER_PORT", 1, 65535, kSlurmWhy);
    } else {
        const std::int64_t job = wide_variable("SLURM_JOB_ID", 0, 4294967295.0, kSlurmWhy);
        const std::int64_t step = wide_variable("SLURM_STEP_ID", 0, 4294967295.0, kSlurmWhy);
        rendezvous.master_port =
            kFirstSlurmPort + static_cast<int>((job * 16 + step) % kSlurmPorts);
    }
    if (variable("SLURM_RESTART_COUNT")) {  // a requeued job
        rendezvous.restart_count = integer_variable("SLURM_RESTART_COUNT", 0, 1e9, kSlurmWhy);
    }
    return rendezvous;
}

}  // namespace

std::string first_slurm_host(const std::string& nodelist) {
    std::string host;
    for (std::size_t at = 0; at < nodelist.size() && nodelist[at] != ','; ++at) {
        if (nodelist[at] != '[') {
            host += nodelist[at];
            continue;
        }
        // "node[07-12,20]": the range's first number, its leading zeros kept.
        const std::size_t close = nodelist.find(']', at);
        if (close == std::string::npos) {
            throw BadInput("Slurm node list \"" + nodelist + "\": a '[' is never closed");
        }
        const std::string ranges = nodelist.substr(at + 1, close - at - 1);
        const std::string first = ranges.substr(0, ranges.find_first_of(",-"));
        if (host.empty() || first.empty() ||
            first.find_first_not_of("0123456789") != std::string::npos) {
            throw BadInput("Slurm node list \"" + nodelist +
                           "\": a range of node numbers such as node[1-3] goes after a host "
                           "name; set MASTER_ADDR to the machine of task 0");
        }
        host += first;
        at = close;
    }
    if (host.empty()) {
        throw BadInput("Slurm node list \"" + nodelist + "\" names no host");
    }
    return host;
}

std::optional<Rendezvous> rendezvous_from_environment() {
    if (variable("WORLD_SIZE")) {
        const int world_size = integer_variable("WORLD_SIZE", 1, kMostRanks, kEnvWhy);
        return world_size == 1 ? std::nullopt  // a group of one is a plain run
                               : std::optional<Rendezvous>(env_rendezvous(world_size));
    }
    // A batch script has SLURM_NTASKS too, but only srun starts the tasks: without a step, the
    // script's own process is a plain run, as it is for torch.distributed.
    if (variable("SLURM_STEP_ID") && variable("SLURM_NTASKS")) {
        const int world_size = integer_variable("SLURM_NTASKS", 1, kMostRanks, kSlurmWhy);
        return world_size == 1 ? std::nullopt
                               : std::optional<Rendezvous>(slurm_rendezvous(world_size));
    }
    return std::nullopt;
}

}  // namespace oomlab
