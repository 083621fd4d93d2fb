#include "oomlab/trackers/mlflow_export.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>

#include <pwd.h>
#include <unistd.h>

#include "mlflow_api.h"
#include "mlflow_run_parts.h"
#include "mlflow_tags.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/utf8.h"
#include "oomlab/run/run_json.h"

namespace oomlab::trackers {
namespace {

// MLflow's limits on one runs/log-batch request.
constexpr std::size_t kMetricsPerBatch = 1000;
constexpr std::size_t kParamsPerBatch = 100;
constexpr std::size_t kTagsPerBatch = 100;
// Its longest parameter and tag values (MLflow 2.x and 3.x); longer ones are cut.
constexpr std::size_t kLongestParam = 6000;
constexpr std::size_t kLongestTag = 8000;

std::string cut(const std::string& text, std::size_t longest) {
    return text.size() <= longest ? text : text.substr(0, longest - 3) + "...";
}

// A JSON number, or the text protobuf's JSON reads as one where JSON has none.
Json metric_value(double value) {
    if (std::isnan(value)) {
        return "NaN";
    }
    if (std::isinf(value)) {
        return value > 0 ? "Infinity" : "-Infinity";
    }
    return value;
}

std::string mlflow_status(RunStatus status) {
    switch (status) {
        case RunStatus::Running:
            return "RUNNING";
        case RunStatus::Completed:
            return "FINISHED";
        case RunStatus::Cancelled:
        case RunStatus::Interrupted:
            return "KILLED";
        default:
            return "FAILED";
    }
}

// What the export sends depends on (the run as it is, who sends it): a run exported again in
// the same state is not sent again.
std::string export_digest(const TrackedRun& tracked, const MlflowTarget& target) {
    const RunRecord& run = tracked.run;
    std::string state = run_summary_json(run) + "|" + std::to_string(tracked.metrics.size()) + "|" +
                        std::to_string(tracked.events.size()) + "|" + sender_name(target.user);
    for (const auto& [key, value] : target.tags) {
        state += "|" + key + "=" + value;
    }
    std::uint64_t hash = 14695981039346656037ull;  // 64-bit FNV-1a
    for (const char c : state) {
        hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
    return hex;
}

Json tag(const std::string& key, const std::string& value) {
    return {{"key", key}, {"value", cut(value, kLongestTag)}};
}

Json run_tags(const TrackedRun& tracked, const MlflowTarget& target) {
    const std::string& user = target.user;
    const RunRecord& run = tracked.run;
    Json tags = Json::array(
        {tag(kUidTag, tracked.uid), tag("oomlab.run_id", std::to_string(run.id)),
         tag("oomlab.status", std::string(run_status_name(run.outcome.status))),
         tag("oomlab.device", run.device), tag("oomlab.engine_version", run.engine_version),
         tag("oomlab.torch_version", run.torch_version),
         tag("oomlab.world_size", std::to_string(run.world_size)),
         tag("mlflow.source.name", "oomlab")});
    if (const std::string name = sender_name(user); !name.empty()) {
        tags.push_back(tag(kUserTag, name));
    }
    if (!run.tags.empty()) {
        tags.push_back(tag("oomlab.tags", run.tags));
    }
    if (!run.notes.empty()) {
        tags.push_back(tag("mlflow.note.content", run.notes));
    }
    if (!run.outcome.error.empty()) {
        tags.push_back(tag("oomlab.error", run.outcome.error));
    }
    if (run.fix_of) {
        tags.push_back(tag("oomlab.fix_of", std::to_string(*run.fix_of)));
    }
    if (run.outcome.fragmentation) {
        tags.push_back(
            tag(kFragmentedTag, run.outcome.fragmentation->fragmented() ? "true" : "false"));
    }
    // The run's own (a lesson run's lesson and prediction, kept with it), then the sender's.
    std::map<std::string, std::string> extra = run.tracker_tags;
    for (const auto& [key, value] : target.tags) {
        extra[key] = value;
    }
    for (const auto& [key, value] : extra) {
        tags.push_back(tag(key, value));
    }
    return tags;
}

// Sends `items` under `key` of runs/log-batch, `per_batch` at a time.
void log_in_batches(MlflowApi& api, const std::string& run_id, const char* key, const Json& items,
                    std::size_t per_batch) {
    for (std::size_t first = 0; first < items.size(); first += per_batch) {
        Json batch = Json::array();
        for (std::size_t i = first; i < std::min(items.size(), first + per_batch); ++i) {
            batch.push_back(items[i]);
        }
        api.post("runs/log-batch", {{"run_id", run_id}, {key, std::move(batch)}});
    }
}

// Metric values gathered into runs/log-batch requests of MLflow's most, each sent when full.
class MetricBatches {
public:
    MetricBatches(MlflowApi& api, std::string run_id, std::int64_t start_ms)
        : m_api(api), m_run_id(std::move(run_id)), m_start_ms(start_ms) {}

    void add(const std::string& key, std::int64_t step, double wall_ms, double value) {
        m_batch.push_back({{"key", key},
                           {"value", metric_value(value)},
                           {"timestamp", m_start_ms + static_cast<std::int64_t>(wall_ms)},
                           {"step", step}});
        if (m_batch.size() == kMetricsPerBatch) {
            flush();
        }
    }
    // Sends what is gathered; returns how many values were sent in all.
    std::size_t flush() {
        if (!m_batch.empty()) {
            m_sent += m_batch.size();
            m_api.post("runs/log-batch", {{"run_id", m_run_id}, {"metrics", std::move(m_batch)}});
            m_batch = Json::array();
        }
        return m_sent;
    }

private:
    MlflowApi& m_api;
    std::string m_run_id;
    std::int64_t m_start_ms;
    Json m_batch = Json::array();
    std::size_t m_sent = 0;
};

// Sends the run's metric values after those sent while it trained (`sent`): its series, a batch
// at a time as they are made (a long run's values never all in memory as JSON), and its final
// values; returns how many.
std::size_t send_metrics(MlflowApi& api, const std::string& run_id, const TrackedRun& tracked,
                         std::int64_t start_ms, std::map<std::string, std::int64_t> sent) {
    std::size_t values = send_series(api, run_id, mlflow_series(tracked), start_ms, sent);
    MetricBatches batches(api, run_id, start_ms);
    const RunOutcome& outcome = tracked.run.outcome;
    for (const auto& [name, value] : final_values(tracked.run)) {
        batches.add(name, outcome.steps, outcome.wall_seconds * 1000.0, value);
    }
    return values + batches.flush();
}

void send_artifacts(MlflowApi& api, const TrackedRun& tracked, const std::string& artifact_uri,
                    MlflowExport& result) {
    if (!api.put_artifact(artifact_uri, "summary.json", run_summary_json(tracked.run))) {
        result.warnings.push_back("the server keeps this run's artifacts at " + artifact_uri +
                                  ", which it does not serve: start it with artifacts served "
                                  "(the default of mlflow server) to upload the run's summary");
        return;
    }
    result.artifacts.push_back("summary.json");
    // The whole run too, compact: its rows of each phase and events that MLflow's series do
    // not hold, and one request a run for an import (of a run of a few hundred thousand rows).
    if (tracked.metrics.size() <= kMostWholeRunRows) {
        const std::string whole = run_export_json(tracked.run, tracked.metrics, tracked.events, -1);
        if (whole.size() <= kMostWholeRunBytes) {
            api.put_artifact(artifact_uri, kWholeRunFile, whole);
            result.artifacts.push_back(kWholeRunFile);
        }
    }
    for (const RunParam& param : run_params(tracked.run)) {
        if (param.key != "debug.memory_snapshot" || param.text.empty()) {
            continue;
        }
        std::error_code error;
        if (!std::filesystem::is_regular_file(param.text, error)) {
            result.warnings.push_back("the run's memory snapshot " + param.text +
                                      " is no longer there: not uploaded");
            continue;
        }
        const std::string name = std::filesystem::path(param.text).filename().string();
        api.put_artifact(artifact_uri, name, "", param.text);
        result.artifacts.push_back(name);
    }
}

}  // namespace

Json create_mlflow_run(MlflowApi& api, const std::string& experiment_id, const TrackedRun& tracked,
                       const MlflowTarget& target) {
    const RunRecord& run = tracked.run;
    Json created = api.post("runs/create", {{"experiment_id", experiment_id},
                                            {"run_name", run.name},
                                            {"start_time", run_start_epoch_ms(run)},
                                            {"tags", run_tags(tracked, target)}});
    return std::move(created.at("run").at("info"));
}

void log_run_params(MlflowApi& api, const std::string& run_id, const TrackedRun& tracked) {
    Json params = Json::array();
    for (const RunParam& param : run_params(tracked.run)) {
        params.push_back({{"key", param.key}, {"value", cut(param.text, kLongestParam)}});
    }
    log_in_batches(api, run_id, "params", params, kParamsPerBatch);
}

std::vector<Series> mlflow_series(const TrackedRun& tracked) {
    std::vector<Series> series = run_series(tracked);
    const RunRecord& run = tracked.run;
    const auto device_used = std::find_if(series.begin(), series.end(), [](const Series& one) {
        return one.name == "memory/device_used_MiB";  // the first rank's
    });
    // The device's memory again as MLflow's own system metrics name it (its GPU monitor logs
    // NVML's used memory in megabytes of 10^6 bytes), so that MLflow's UI charts it with its
    // system metrics, on the GPU the run names ("cuda:1" is gpu_1). A CPU run's figure is the
    // process's resident memory, not the system's that MLflow's name stands for: none.
    if (run.device.rfind("cuda", 0) != 0 || device_used == series.end()) {
        return series;
    }
    const int index =
        run.device.size() > 5 && run.device[4] == ':' ? std::atoi(run.device.c_str() + 5) : 0;
    Series gpu{"system/gpu_" + std::to_string(index) + "_memory_usage_megabytes", {}};
    for (SeriesPoint point : device_used->points) {
        point.value *= kBytesPerMiB / 1e6;
        gpu.points.push_back(point);
    }
    series.push_back(std::move(gpu));
    return series;
}

std::size_t send_series(MlflowApi& api, const std::string& run_id,
                        const std::vector<Series>& series, std::int64_t start_ms,
                        std::map<std::string, std::int64_t>& sent) {
    MetricBatches batches(api, run_id, start_ms);
    for (const Series& one : series) {
        const auto last = sent.find(one.name);
        for (const SeriesPoint& point : one.points) {
            if (last == sent.end() || point.step > last->second) {
                batches.add(one.name, point.step, point.wall_ms, point.value);
            }
        }
        if (!one.points.empty()) {
            std::int64_t& through =
                sent.try_emplace(one.name, one.points.back().step).first->second;
            through = std::max(through, one.points.back().step);
        }
    }
    return batches.flush();
}

std::string login_name() {
    for (const char* variable : {"LOGNAME", "USER", "LNAME", "USERNAME"}) {
        const char* value = std::getenv(variable);
        if (value != nullptr && *value != '\0') {
            return value;
        }
    }
    const passwd* account = ::getpwuid(::getuid());
    return account != nullptr && account->pw_name != nullptr ? account->pw_name : "";
}

std::string sender_name(const std::string& chosen) {
    return chosen.empty() ? login_name() : chosen;
}

std::string uri_without_password(const std::string& uri) {
    // scheme://user:password@host...: the user information ends at the first '@' before the
    // path; the password is what follows its first ':'.
    const auto start = uri.find("://");
    const std::size_t authority = start == std::string::npos ? 0 : start + 3;
    const std::size_t authority_end = uri.find_first_of("/?#", authority);
    const std::size_t at =
        uri.rfind('@', authority_end == std::string::npos ? uri.size() - 1 : authority_end);
    if (at == std::string::npos || at < authority) {
        return uri;
    }
    const std::size_t colon = uri.find(':', authority);
    if (colon == std::string::npos || colon > at) {
        return uri;
    }
    return uri.substr(0, colon + 1) + "***" + uri.substr(at);
}

void check_tracking_uri(const std::string& uri, const std::string& option) {
    const std::string shown = uri_without_password(uri);
    if (shown != uri) {
        throw BadInput(option + ": \"" + shown +
                       "\" holds a password, which would be printed and stored with the "
                       "address; give the address without it and the user and password in "
                       "MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD, as MLflow's own "
                       "client takes them");
    }
    const auto scheme_end = uri.find("://");
    const std::string scheme = scheme_end == std::string::npos ? "" : uri.substr(0, scheme_end);
    if ((scheme != "http" && scheme != "https") || uri.size() <= scheme_end + 3) {
        throw BadInput(option + ": \"" + uri +
                       "\" is not the address of an MLflow tracking server; give "
                       "http://HOST:PORT, e.g. http://127.0.0.1:5000");
    }
}

namespace {

// Called while an exception is handled: one from reading an answer of a shape MLflow never
// gives becomes an Error naming the server and `call`; any other goes on as it is.
[[noreturn]] void rethrow_naming_the_call(const std::string& uri, const std::string& call) {
    try {
        throw;
    } catch (const nlohmann::json::exception& error) {
        throw Error("MLflow at " + uri + " answered " + call +
                    " in a shape no MLflow tracking server answers in (" + error.what() +
                    "): is this the address of an MLflow server? The run was not sent; it is "
                    "kept in the run database");
    }
}

// The run's artifacts, its end and, last, the digest: only a whole export carries the digest
// that lets the next one stop early.
void finish_mlflow_run(MlflowApi& api, const TrackedRun& tracked, const std::string& artifact_uri,
                       const std::string& digest, MlflowExport& result) {
    const RunRecord& run = tracked.run;
    send_artifacts(api, tracked, artifact_uri, result);
    if (run.outcome.status != RunStatus::Running) {
        api.post("runs/update",
                 {{"run_id", result.run_id},
                  {"status", mlflow_status(run.outcome.status)},
                  {"end_time", run_start_epoch_ms(run) +
                                   static_cast<std::int64_t>(run.outcome.wall_seconds * 1000.0)}});
    }
    Json tags = Json::array();
    if (std::find(result.artifacts.begin(), result.artifacts.end(), kWholeRunFile) !=
        result.artifacts.end()) {
        tags.push_back(tag(kWholeRunTag, kWholeRunFile));
    }
    tags.push_back(tag(kDigestTag, digest));  // last
    log_in_batches(api, result.run_id, "tags", tags, kTagsPerBatch);
}

MlflowExport send_to_mlflow(MlflowApi& api, const TrackedRun& tracked, const MlflowTarget& target) {
    MlflowExport result;
    result.experiment_id = api.experiment_id(target.experiment, target.named.experiment);
    const std::string digest = export_digest(tracked, target);

    const Json found = api.post(
        "runs/search", {{"experiment_ids", {result.experiment_id}},
                        {"filter", std::string("tags.`") + kUidTag + "` = '" + tracked.uid + "'"},
                        {"max_results", 100}});
    for (const Json& earlier : found.value("runs", Json::array())) {
        const std::string earlier_id = earlier.at("info").at("run_id").get<std::string>();
        for (const Json& earlier_tag : earlier.at("data").value("tags", Json::array())) {
            if (earlier_tag.value("key", "") == kDigestTag &&
                earlier_tag.value("value", "") == digest) {
                result.run_id = earlier_id;
                result.unchanged = true;
                return result;
            }
        }
        api.post("runs/delete", {{"run_id", earlier_id}});
        result.replaced = true;
    }

    const RunRecord& run = tracked.run;
    const std::int64_t start_ms = run_start_epoch_ms(run);
    const Json created = create_mlflow_run(api, result.experiment_id, tracked, target);
    result.run_id = created.at("run_id").get<std::string>();
    try {
        const std::string artifact_uri = created.value("artifact_uri", "");
        log_run_params(api, result.run_id, tracked);
        result.metric_values = send_metrics(api, result.run_id, tracked, start_ms, {});
        finish_mlflow_run(api, tracked, artifact_uri, digest, result);
    } catch (...) {
        const std::string failed_call = api.last_call();
        try {
            api.post("runs/delete", {{"run_id", result.run_id}});  // no half-sent run left
        } catch (const std::exception&) {
        }
        rethrow_naming_the_call(api.uri(), failed_call);
    }
    return result;
}

// The run as it trained, made there running (mlflow_live.h): what is left, in the same run.
MlflowExport go_on_in_mlflow(MlflowApi& api, const TrackedRun& tracked,
                             const MlflowTarget& target) {
    const MlflowSentWhileTraining& sent = *target.sent_while_training;
    MlflowExport result;
    result.experiment_id = sent.experiment_id;
    result.run_id = sent.run_id;
    result.went_on = true;
    try {
        const Json got = api.get("runs/get", "run_id=" + sent.run_id);
        const std::string artifact_uri = got.at("run").at("info").value("artifact_uri", "");
        // Its tags again: its status and error are known now (a tag logged again is replaced).
        log_in_batches(api, result.run_id, "tags", run_tags(tracked, target), kTagsPerBatch);
        result.metric_values = send_metrics(api, result.run_id, tracked,
                                            run_start_epoch_ms(tracked.run), sent.last_step);
        finish_mlflow_run(api, tracked, artifact_uri, export_digest(tracked, target), result);
    } catch (...) {
        rethrow_naming_the_call(api.uri(), api.last_call());
    }
    return result;
}

}  // namespace

MlflowExport export_to_mlflow(const TrackedRun& tracked, const MlflowTarget& target) {
    check_tracking_uri(target.tracking_uri, target.named.uri);
    MlflowApi api(target.tracking_uri, target.control);
    try {
        return target.sent_while_training ? go_on_in_mlflow(api, tracked, target)
                                          : send_to_mlflow(api, tracked, target);
    } catch (const nlohmann::json::exception&) {
        rethrow_naming_the_call(api.uri(), api.last_call());
    }
}

std::string describe(const TrackedRun& tracked, const MlflowTarget& target,
                     const MlflowExport& sent) {
    std::string text = "run " + std::to_string(tracked.run.id) + " -> MLflow " +
                       target.tracking_uri + ", experiment " + quoted_excerpt(target.experiment) +
                       ", run " + sent.run_id + ": ";
    if (sent.unchanged) {
        text += "already there as it is now, nothing sent";
    } else {
        text += (sent.went_on ? "sent while it trained, then " : "") +
                std::to_string(sent.metric_values) + " metric values";
        for (const std::string& artifact : sent.artifacts) {
            text += (&artifact == &sent.artifacts.front() ? ", artifacts " : ", ") + artifact;
        }
        if (sent.replaced) {
            text += " (replacing an earlier export of it)";
        }
    }
    for (const std::string& warning : sent.warnings) {
        text += "\n  note: " + warning;
    }
    return text;
}

}  // namespace oomlab::trackers
