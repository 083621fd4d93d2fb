// Sending saved runs to a team's tracker (MLflow, TensorBoard): `runs export --to` and the
// options of `run` that mirror a run when it ends.
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "oomlab/store/run_store.h"
#include "oomlab/trackers/mlflow_export.h"

namespace oomlab::cli {

struct TrackerTargets {
    std::string mlflow_uri;
    std::string experiment = "OOM Lab";
    std::string tensorboard_dir;
    std::string user;         // who the runs are sent as on MLflow (empty: the login name)
    double send_every_s = 2;  // how often a run's new steps are sent while it trains

    // The interval MlflowLiveRun sends at.
    std::chrono::milliseconds send_every() const;

    bool empty() const { return mlflow_uri.empty() && tensorboard_dir.empty(); }
    // --mlflow URI, --mlflow-experiment NAME, --mlflow-user NAME, --mlflow-every SECONDS,
    // --tensorboard DIR (on `run` and `lesson run`).
    void add_run_options(CLI::App& command);
    // Throws BadInput naming the option before anything trains or is sent.
    void check(const std::string& uri_option = "--mlflow",
               const std::string& experiment_option = "--mlflow-experiment") const;
};

// --mlflow-user's help, and `runs export --user`'s.
extern const char* const kUserHelp;

// The MLflow server and experiment of `targets`, with notes on waits printed.
trackers::MlflowTarget mlflow_target(const TrackerTargets& targets);

// Sends run `run_id` to each target and prints what was sent (a JSON line with `json`);
// `sent`: what MLflow got while the run trained. Throws Error when a target fails.
void export_run(const RunStore& store, std::int64_t run_id, const TrackerTargets& targets,
                bool json, const std::optional<trackers::MlflowSentWhileTraining>& sent = {});

// After `run`: the same, with a failure printed as a warning that says how to send the run
// later; the run and the exit code are left as they are.
void mirror_run(const RunStore& store, std::int64_t run_id, const TrackerTargets& targets,
                bool json, const std::optional<trackers::MlflowSentWhileTraining>& sent = {});

}  // namespace oomlab::cli
