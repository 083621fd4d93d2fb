// The parts of a run as an MLflow server receives them, shared by the export at a run's end
// (mlflow_export.cpp) and the sending while it trains (mlflow_live.cpp), so that both make the
// same run there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mlflow_api.h"
#include "oomlab/trackers/mlflow_export.h"
#include "oomlab/trackers/tracked_run.h"

namespace oomlab::trackers {

// Makes the run in experiment `experiment_id`, running, with its tags; returns the server's
// "info" of it (its run_id, artifact_uri), read by the caller, which deletes the run again if
// the info is not of MLflow's shape. Tagged with who sent it (sender_name of target.user) and
// the target's own tags.
nlohmann::json create_mlflow_run(MlflowApi& api, const std::string& experiment_id,
                                 const TrackedRun& tracked, const MlflowTarget& target);
// Logs the run's settings as its parameters.
void log_run_params(MlflowApi& api, const std::string& run_id, const TrackedRun& tracked);

// Sends the points of `series` after the last step `sent` holds for each (none: all), at most
// 1,000 values a request, and moves `sent` on to the last point sent; returns how many were.
std::size_t send_series(MlflowApi& api, const std::string& run_id,
                        const std::vector<Series>& series, std::int64_t start_ms,
                        std::map<std::string, std::int64_t>& sent);

}  // namespace oomlab::trackers
