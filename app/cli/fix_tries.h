// `oomlab-cli run --try-fixes`: after a run that ran out of memory, each fix it was offered
// trained in turn in the same process (LibTorch and the data loaded once), each saved as a
// run that tries that fix, and what each reached shown beside its prediction.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "oomlab/advice/oom_fixes.h"
#include "oomlab/config/experiment_config.h"
#include "oomlab/run/run_record.h"
#include "oomlab/session/run_session.h"

namespace oomlab::cli {

// How each try is trained and recorded: run_and_record with the caller's listener and stop.
using TrainTry = std::function<RunResult(const ExperimentConfig&, const std::string& name)>;

// How each try's run is shown when it ends, as `run` shows its own.
using PrintSummary = std::function<void(const RunRecord&, const std::vector<OomFix>&)>;

// Tries each of `failed`'s fixes in turn with `train`, linking each run to `failed` in `store`
// and giving it `tags`; shows each with `print_summary`, then every try beside its prediction
// (`json`: one line of type "tries", the last). A fix refused as a setting is said and passed
// over. Stops at a try that was stopped (Ctrl+C) and returns kExitInterrupted; else kExitOk,
// whatever the tries reached.
int try_each_fix(const ExperimentConfig& config, const RunResult& failed, RunStore& store,
                 const std::string& tags, bool json, const TrainTry& train,
                 const PrintSummary& print_summary);

}  // namespace oomlab::cli
