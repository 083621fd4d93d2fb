// Where this process stands in a data-parallel run, as torchrun or `oomlab-cli run --nproc`
// describe it in RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT, or Slurm's srun in
// its own variables; and the limits on how many processes a run may have.
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

// Where srun's tasks meet when MASTER_PORT is not set: kFirstSlurmPort + (16 x SLURM_JOB_ID +
// SLURM_STEP_ID) mod kSlurmPorts, the same in every task of a step.
inline constexpr int kFirstSlurmPort = 15000;
inline constexpr int kSlurmPorts = 15000;

// The rendezvous the environment describes; none for a plain run. With WORLD_SIZE set (2 or
// more), as torch.distributed's env:// reads it: RANK, MASTER_ADDR and MASTER_PORT must be set
// too (LOCAL_RANK defaults to RANK), and under torchrun its agent's store is joined. Otherwise,
// in a job step srun started (SLURM_STEP_ID and SLURM_NTASKS of 2 or more): the rank is
// SLURM_PROCID and the device SLURM_LOCALID, with rank 0 on the step's first node and the port
// above unless MASTER_ADDR and MASTER_PORT say otherwise. Throws BadInput naming the variable that
// is missing, out of range, or names a host that cannot be found.
std::optional<Rendezvous> rendezvous_from_environment();

// The first host of a Slurm node list ("gpu[07-12,20],cpu3" -> "gpu07"), as `scontrol show
// hostnames` would list it first. Throws BadInput for a list that names none.
std::string first_slurm_host(const std::string& nodelist);

// A TCP port on 127.0.0.1 free at the time of the call, below the range the kernel picks
// outgoing connections' ports from where it can, so that none takes it before rank 0 binds it.
int free_loopback_port();

}  // namespace oomlab
