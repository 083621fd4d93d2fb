// The engine's side of a worker process: `oomlab-cli worker FOLDER` calls this and nothing
// else. The job in FOLDER (workers/worker_jobs.h) says what to do; this process is the rank
// the environment names (workers/rendezvous.h).
#pragma once

#include <atomic>
#include <string>

namespace oomlab {

// Runs this rank's part of the job in `folder` and returns the process's exit code
// (workers/exit_code.h): a run's exit code from how it ended, kExitOutOfMemory for a search
// that found no batch, kExitBadInput (reported to the launcher with its keys, and on standard
// error) for a job, config or environment it refuses. `stop` asks a run to stop, as Ctrl+C
// does (a search does not read it). Other failures are thrown.
int run_worker_task(const std::string& folder, const std::atomic<bool>& stop);

}  // namespace oomlab
