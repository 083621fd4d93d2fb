// A run sent to an MLflow tracking server while it trains, so that a class's runs are seen as
// they run: made there running, with its settings, once it starts; then every few seconds the
// steps saved since, read from the run store on a thread of its own, 1,000 values a request
// (MLflow's most). Training never waits for the server: a slow one gets the steps later, in
// fewer and larger requests (the store holds them meanwhile, none dropped); one that fails is
// said once and left until the run ends, when export_to_mlflow, given what was sent, finishes
// the same MLflow run with the rest.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "oomlab/store/run_store.h"
#include "oomlab/trackers/mlflow_export.h"

namespace oomlab::trackers {

class MlflowLiveRun {
public:
    // Sends to `target` (its URI checked by the caller) the run `start` names in `database`.
    MlflowLiveRun(MlflowTarget target, std::string database,
                  std::chrono::milliseconds every = std::chrono::seconds(2));
    ~MlflowLiveRun();  // stops, a request under way ended
    MlflowLiveRun(const MlflowLiveRun&) = delete;
    MlflowLiveRun& operator=(const MlflowLiveRun&) = delete;

    // The run has its row: sending begins.
    void start(std::int64_t run_id);
    // The run has ended: stops once a round under way is done (the rest goes with the export
    // at the end). Returns what was sent (nullopt: the run was never made there), for
    // export_to_mlflow.
    std::optional<MlflowSentWhileTraining> finish();
    // Why sending stopped before the end; empty while it went well.
    std::string problem() const;

private:
    void send_while_training(std::int64_t run_id);
    // One round: the run made there if it is not yet, then what is new. False after a failure.
    bool send_what_is_new(std::optional<RunStore>& store, std::int64_t run_id);

    MlflowTarget m_target;
    std::string m_database;
    std::chrono::milliseconds m_every;
    std::atomic<bool> m_stop{false};  // ends a request under way (the destructor)
    mutable std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_ending = false;  // finish() or the destructor: no round more
    std::optional<MlflowSentWhileTraining> m_sent;
    std::int64_t m_last_row = 0;  // the last metric row read
    std::int64_t m_start_ms = 0;  // the run's start, as its values' timestamps count from
    std::string m_device;         // the run's ("cuda:0"): which GPU its system metric names
    std::string m_problem;
    std::thread m_thread;
};

// A run sent while it trained whose process was killed stays RUNNING on the server: nothing
// sent its end, and a class's view shows it silent. Of `uids` (runs a database holds as
// interrupted), those the target's experiment still holds running. One search of the
// experiment's running runs, none where `uids` is empty.
std::vector<std::string> left_running_on_mlflow(const MlflowTarget& target,
                                                const std::vector<std::string>& uids);
// Those runs of `store` sent again whole, ended, each in its place (export_to_mlflow): their
// ids. Throws as export_to_mlflow does.
std::vector<std::int64_t> end_runs_left_running(const RunStore& store, const MlflowTarget& target);

}  // namespace oomlab::trackers
