// A saved run mirrored into an MLflow tracking server through its REST API (never its
// database files, whose schema the server owns): the settings as parameters, every per-step
// series as metrics by step, the breakdown at the peak and the prediction, status and tags,
// and the run's JSON summary (and memory snapshot, when one was written) as artifacts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "oomlab/trackers/request_control.h"
#include "oomlab/trackers/tracked_run.h"

namespace oomlab::trackers {

// What was sent of a run while it trained (mlflow_live.h).
struct MlflowSentWhileTraining {
    std::string experiment_id;
    std::string run_id;                             // MLflow's
    std::map<std::string, std::int64_t> last_step;  // by series: the last step sent
};

struct MlflowTarget {
    std::string tracking_uri;            // http://host:port (a path prefix allowed)
    std::string experiment = "OOM Lab";  // made when missing
    RequestControl control;              // notes while a busy server is asked again; a stop
    TrackerFields named;
    // Who the runs are sent as (MLflow's mlflow.user tag, a class's name for the student):
    // empty, the login name, as MLflow's own client does.
    std::string user;
    // More tags for the run (a lesson's run: the lesson and the student's prediction), part of
    // what the export sends again when it changes.
    std::map<std::string, std::string> tags;
    // Set: the run was made there while it trained; the export goes on in that MLflow run
    // with what was not sent yet, its end, its artifacts.
    std::optional<MlflowSentWhileTraining> sent_while_training;
};

struct MlflowExport {
    std::string experiment_id;
    std::string run_id;  // MLflow's
    // The server already held this run as it is now: nothing was sent again.
    bool unchanged = false;
    // An earlier export of the run (of an older state, or cut short) was deleted and replaced.
    bool replaced = false;
    // The run was made there while it trained: this export sent what was left.
    bool went_on = false;
    std::size_t metric_values = 0;
    std::vector<std::string> artifacts;
    std::vector<std::string> warnings;  // what could not be sent, and why
};

// Checks a tracking URI before anything is sent: http:// or https://, with a host, and no
// password in it (one would be printed and stored with the URI; MLflow's own variables
// MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD pass it, as to MLflow's client).
// Throws BadInput naming `option` otherwise, the password never repeated.
void check_tracking_uri(const std::string& uri, const std::string& option);

// `uri` with the password of its user information, if any, as "***": for every message.
std::string uri_without_password(const std::string& uri);

// Sends the run. The run is found again by its identity (the tag oomlab.run_uid), so exporting
// twice makes one MLflow run. Throws Error naming the server and what to do when it is down,
// is not an MLflow server or refuses; a run cut short on the server is deleted again.
MlflowExport export_to_mlflow(const TrackedRun& tracked, const MlflowTarget& target);

// The run's series as MLflow gets them: run_series, and a CUDA run's device memory again under
// MLflow's system-metric name (system/gpu_K_memory_usage_megabytes).
std::vector<Series> mlflow_series(const TrackedRun& tracked);

// The name a run is sent under: `chosen` (MlflowTarget::user), else the login name.
std::string sender_name(const std::string& chosen);

// What was sent, as people read it: "run 3 -> MLflow http://...: 120 metric values, artifacts
// summary.json", then a line for each warning.
std::string describe(const TrackedRun& tracked, const MlflowTarget& target,
                     const MlflowExport& sent);

}  // namespace oomlab::trackers
