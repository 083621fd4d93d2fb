// Where this process stands in a data-parallel run, as torchrun, a Slurm wrapper or
// `oomlab-cli run --nproc` describe it in RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and
// MASTER_PORT; and the limits on how many processes a run may have.
#pragma once

#include <optional>
#include <string>

namespace oomlab {

// The most processes one data-parallel run may have, on any number of machines (WORLD_SIZE,
// `estimate --nproc`).
inline constexpr int kMostRanks = 4096;
// The most worker processes a launcher starts on this machine (`--nproc`, the workbench).
inline constexpr int kMostLocalWorkers = 64;

struct Rendezvous {
    int rank = 0;
    int world_size = 1;
    int local_rank = 0;  // which of this machine's devices to use
    std::string master_addr = "127.0.0.1";
    int master_port = 29500;
    // torchrun's agent already serves the store on MASTER_PORT (TORCHELASTIC_USE_AGENT_STORE):
    // rank 0 joins it as every other rank does, instead of serving one itself.
    bool join_agent_store = false;
    int restart_count = 0;  // TORCHELASTIC_RESTART_COUNT: which attempt of the group this is
};

// The rendezvous the environment describes; none when WORLD_SIZE is unset (or 1). As
// torch.distributed's env:// does, RANK, MASTER_ADDR and MASTER_PORT must then be set too
// (LOCAL_RANK defaults to RANK). Throws BadInput naming the variable that is missing, out of
// range, or (MASTER_ADDR) a host that cannot be found. Under torchrun, its agent's store is
// joined as torch.distributed's env:// joins it.
std::optional<Rendezvous> rendezvous_from_environment();

// A TCP port on 127.0.0.1 free at the time of the call, below the range the kernel picks
// outgoing connections' ports from where it can, so that none takes it before rank 0 binds it.
int free_loopback_port();

}  // namespace oomlab
