#include "oomlab/trackers/mlflow_live.h"

#include <map>
#include <set>
#include <utility>

#include "mlflow_api.h"
#include "mlflow_history.h"
#include "mlflow_run_parts.h"
#include "mlflow_tags.h"
#include "oomlab/common/errors.h"

namespace oomlab::trackers {

MlflowLiveRun::MlflowLiveRun(MlflowTarget target, std::string database,
                             std::chrono::milliseconds every)
    : m_target(std::move(target)), m_database(std::move(database)), m_every(every) {
    m_target.control.stop = &m_stop;
}

MlflowLiveRun::~MlflowLiveRun() {
    m_stop = true;
    {
        const std::lock_guard<std::mutex> lock(m_mutex);
        m_ending = true;
    }
    m_wake.notify_all();
    if (m_thread.joinable()) {
        m_thread.join();
    }
}

void MlflowLiveRun::start(std::int64_t run_id) {
    if (!m_thread.joinable()) {
        m_thread = std::thread([this, run_id] { send_while_training(run_id); });
    }
}

std::optional<MlflowSentWhileTraining> MlflowLiveRun::finish() {
    {
        const std::lock_guard<std::mutex> lock(m_mutex);
        m_ending = true;
    }
    m_wake.notify_all();
    if (m_thread.joinable()) {
        m_thread.join();
    }
    const std::lock_guard<std::mutex> lock(m_mutex);
    return m_sent;
}

std::string MlflowLiveRun::problem() const {
    const std::lock_guard<std::mutex> lock(m_mutex);
    return m_problem;
}

void MlflowLiveRun::send_while_training(std::int64_t run_id) {
    std::optional<RunStore> store;
    for (;;) {
        {
            std::unique_lock<std::mutex> lock(m_mutex);
            // Ended: what is left goes with the export at the end, not in a round of its own.
            if (m_wake.wait_for(lock, m_every, [this] { return m_ending; })) {
                return;
            }
        }
        if (!send_what_is_new(store, run_id)) {
            return;
        }
    }
}

bool MlflowLiveRun::send_what_is_new(std::optional<RunStore>& store, std::int64_t run_id) {
    try {
        if (!store) {
            store.emplace(RunStore::open(m_database));
        }
        MlflowApi api(m_target.tracking_uri, m_target.control);
        std::optional<MlflowSentWhileTraining> sent;
        {
            const std::lock_guard<std::mutex> lock(m_mutex);
            sent = m_sent;
        }
        if (!sent) {
            const TrackedRun tracked = tracked_run(*store, run_id);
            m_start_ms = run_start_epoch_ms(tracked.run);
            m_device = tracked.run.device;
            sent.emplace();
            sent->experiment_id = api.experiment_id(m_target.experiment, m_target.named.experiment);
            sent->run_id = create_mlflow_run(api, sent->experiment_id, tracked, m_target)
                               .at("run_id")
                               .get<std::string>();
            // Made there without its settings, it is not taken up: the export at the end finds
            // it by its uid and makes it again whole.
            log_run_params(api, sent->run_id, tracked);
            const std::lock_guard<std::mutex> lock(m_mutex);
            m_sent = sent;
        }
        TrackedRun steps;
        steps.run.device = m_device;
        steps.metrics = store->metrics_after(run_id, m_last_row);
        // What was sent is said only once all of it was: a request that failed half way has
        // its values sent again at the end (MLflow keeps one of a value logged twice).
        send_series(api, sent->run_id, mlflow_series(steps), m_start_ms, sent->last_step);
        const std::lock_guard<std::mutex> lock(m_mutex);
        m_sent = std::move(sent);
        return true;
    } catch (const std::exception& error) {
        const std::lock_guard<std::mutex> lock(m_mutex);
        m_problem = error.what();
        return false;
    }
}

std::vector<std::string> left_running_on_mlflow(const MlflowTarget& target,
                                                const std::vector<std::string>& uids) {
    std::vector<std::string> left;
    if (uids.empty()) {
        return left;
    }
    MlflowApi api(target.tracking_uri, target.control);
    const std::optional<std::string> experiment = api.find_experiment(target.experiment);
    if (!experiment) {
        return left;
    }
    const std::set<std::string> wanted(uids.begin(), uids.end());
    for_each_run(
        api, *experiment,
        [&](nlohmann::json& run) {
            const nlohmann::json data = run.value("data", nlohmann::json::object());
            for (const nlohmann::json& tag : data.value("tags", nlohmann::json::array())) {
                if (tag.value("key", "") == kUidTag && wanted.count(tag.value("value", "")) > 0) {
                    left.push_back(tag.value("value", ""));
                }
            }
        },
        "attributes.status = 'RUNNING'");
    return left;
}

std::vector<std::int64_t> end_runs_left_running(const RunStore& store, const MlflowTarget& target) {
    RunFilter interrupted;
    interrupted.status = RunStatus::Interrupted;
    std::map<std::string, std::int64_t> run_of_uid;
    std::vector<std::string> uids;
    for (const RunRecord& run : store.list_runs(interrupted)) {
        const std::string uid = store.run_uid(run.id);
        if (!uid.empty()) {
            run_of_uid[uid] = run.id;
            uids.push_back(uid);
        }
    }
    // Each is sent whole in its own place: never as the run another sending made while it
    // trained (a target that carries one, as the workbench's does for the run it just sent).
    MlflowTarget whole = target;
    whole.sent_while_training.reset();
    std::vector<std::int64_t> ended;
    for (const std::string& uid : left_running_on_mlflow(whole, uids)) {
        ended.push_back(run_of_uid.at(uid));
        export_to_mlflow(tracked_run(store, ended.back()), whole);
    }
    return ended;
}

}  // namespace oomlab::trackers
