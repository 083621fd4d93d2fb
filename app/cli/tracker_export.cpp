#include "tracker_export.h"

#include <iostream>

#include "cli_context.h"
#include "oomlab/common/errors.h"
#include "oomlab/trackers/mlflow_export.h"
#include "oomlab/trackers/mlflow_live.h"
#include "oomlab/trackers/tensorboard_export.h"

namespace oomlab::cli {
namespace {

using Json = nlohmann::ordered_json;

void report_mlflow(const trackers::TrackedRun& tracked, const trackers::MlflowTarget& target,
                   const trackers::MlflowExport& sent, bool json) {
    if (json) {
        std::cout << json_line(Json{{"run", tracked.run.id},
                                    {"to", "mlflow"},
                                    {"tracking_uri", target.tracking_uri},
                                    {"experiment_id", sent.experiment_id},
                                    {"mlflow_run_id", sent.run_id},
                                    {"unchanged", sent.unchanged},
                                    {"replaced", sent.replaced},
                                    {"sent_while_training", sent.went_on},
                                    {"metric_values", sent.metric_values},
                                    {"artifacts", sent.artifacts},
                                    {"warnings", sent.warnings}})
                  << '\n';
        return;
    }
    std::cout << describe(tracked, target, sent) << '\n';
}

void report_tensorboard(const trackers::TrackedRun& tracked,
                        const trackers::TensorBoardExport& written, bool json) {
    if (json) {
        std::cout << json_line(Json{{"run", tracked.run.id},
                                    {"to", "tensorboard"},
                                    {"run_folder", written.run_folder},
                                    {"event_file", written.event_file},
                                    {"scalars", written.scalars}})
                  << '\n';
        return;
    }
    std::cout << describe(tracked, written) << '\n';
}

}  // namespace

const char* const kUserHelp =
    "The name the run is sent under on MLflow (its mlflow.user tag: a class's view lists "
    "students by it); default: the login name";

void TrackerTargets::add_run_options(CLI::App& command) {
    command.add_option(
        "--mlflow", mlflow_uri,
        "Send the run to the MLflow tracking server at URI (http://HOST:PORT): "
        "its steps every 2 s (--mlflow-every) while it trains, the rest when it ends");
    command
        .add_option("--mlflow-every", send_every_s,
                    "How often (seconds) the steps of a run sent to MLflow are sent while it "
                    "trains: less often for a class of many on one server, more for a demo")
        ->check(seconds_check("the seconds between two sends while it trains", 0.1, 3600))
        ->capture_default_str();
    command.add_option("--mlflow-experiment", experiment, "The MLflow experiment to send it to")
        ->capture_default_str();
    command.add_option("--mlflow-user", user, kUserHelp);
    command.add_option("--tensorboard", tensorboard_dir,
                       "When the run ends, write its TensorBoard event files under DIR");
}

std::chrono::milliseconds TrackerTargets::send_every() const {
    return std::chrono::milliseconds(static_cast<std::int64_t>(send_every_s * 1000));
}

void TrackerTargets::check(const std::string& uri_option,
                           const std::string& experiment_option) const {
    if (!mlflow_uri.empty()) {
        trackers::check_tracking_uri(mlflow_uri, uri_option);
    }
    if (experiment.empty()) {
        throw BadInput(experiment_option + ": give the name of an experiment");
    }
}

trackers::MlflowTarget mlflow_target(const TrackerTargets& targets) {
    trackers::MlflowTarget target;
    target.tracking_uri = targets.mlflow_uri;
    target.experiment = targets.experiment;
    target.user = targets.user;
    target.control.on_wait = [](const std::string& note) { std::cerr << note << '\n'; };
    return target;
}

namespace {

// This database's runs whose process was killed while they were sent as they trained: still
// running on the server (nothing sent their end), each is sent again whole, ended.
void end_runs_left_running(const RunStore& store, const TrackerTargets& targets) {
    try {
        for (const std::int64_t run_id :
             trackers::end_runs_left_running(store, mlflow_target(targets))) {
            std::cerr << "note: run " << run_id << " stopped without its end while it was sent "
                      << "(its process was killed): it is ended on MLflow now\n";
        }
    } catch (const std::exception& error) {
        std::cerr << "warning: the runs of " << store.path()
                  << " left running on MLflow were not ended there: " << error.what() << '\n';
    }
}

}  // namespace

void export_run(const RunStore& store, std::int64_t run_id, const TrackerTargets& targets,
                bool json, const std::optional<trackers::MlflowSentWhileTraining>& sent) {
    const trackers::TrackedRun tracked = trackers::tracked_run(store, run_id);
    if (!targets.mlflow_uri.empty()) {
        trackers::MlflowTarget target = mlflow_target(targets);
        target.sent_while_training = sent;
        report_mlflow(tracked, target, trackers::export_to_mlflow(tracked, target), json);
    }
    if (!targets.tensorboard_dir.empty()) {
        report_tensorboard(tracked,
                           trackers::export_to_tensorboard(tracked, targets.tensorboard_dir), json);
    }
}

void mirror_run(const RunStore& store, std::int64_t run_id, const TrackerTargets& targets,
                bool json, const std::optional<trackers::MlflowSentWhileTraining>& sent) {
    // Each tracker on its own: one that fails does not keep the run from the other.
    const auto send = [&](const TrackerTargets& one, const std::string& export_options) {
        try {
            export_run(store, run_id, one, json, sent);
            return true;
        } catch (const Error& error) {
            std::cerr << "warning: run " << run_id
                      << " is saved, but was not sent: " << error.what()
                      << "\n  send it later with: oomlab-cli runs export " << run_id << " --db "
                      << store.path() << export_options << '\n';
            return false;
        }
    };
    if (!targets.mlflow_uri.empty()) {
        TrackerTargets mlflow = targets;
        mlflow.tensorboard_dir.clear();
        if (send(mlflow, " --to mlflow --tracking-uri " + targets.mlflow_uri + " --experiment \"" +
                             targets.experiment + "\"" +
                             (targets.user.empty() ? "" : " --user \"" + targets.user + "\""))) {
            end_runs_left_running(store, mlflow);
        }
    }
    if (!targets.tensorboard_dir.empty()) {
        TrackerTargets tensorboard = targets;
        tensorboard.mlflow_uri.clear();
        send(tensorboard, " --to tensorboard --out " + targets.tensorboard_dir);
    }
}

}  // namespace oomlab::cli
