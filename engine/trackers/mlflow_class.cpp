#include "oomlab/trackers/mlflow_class.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "http_client.h"
#include "mlflow_api.h"
#include "mlflow_history.h"
#include "mlflow_tags.h"
#include "oomlab/common/format.h"
#include "oomlab/trackers/mlflow_export.h"

namespace oomlab::trackers {
namespace {

constexpr const char* kLossKey = "train/loss";
constexpr const char* kMemoryKey = "memory/reserved_MiB";

// MLflow's values of a series as (step, value), by step, without those no run can have;
// `last_ms` moved on to the latest value's time.
StepSeries step_series(const std::vector<Json>& values, std::int64_t& last_ms) {
    StepSeries series;
    for (const Json& value : values) {
        const double time = whole_number(value.value("timestamp", Json(0)));
        if (time > double(last_ms) && time < 1e15) {
            last_ms = std::int64_t(time);
        }
        const double step = whole_number(value.value("step", Json(0)));
        const double number = metric_value(value.value("value", Json()));
        if (step >= 0 && std::isfinite(number)) {
            series.push_back({std::int64_t(step), number});
        }
    }
    std::stable_sort(series.begin(), series.end(),
                     [](const StepValue& a, const StepValue& b) { return a.step < b.step; });
    return series;
}

// At most `most` of `series`'s points, evenly spread, the first and last kept.
StepSeries thinned(StepSeries series, std::size_t most) {
    if (series.size() <= most || most < 2) {
        return series;
    }
    StepSeries kept;
    for (std::size_t i = 0; i < most; ++i) {
        kept.push_back(series[i * (series.size() - 1) / (most - 1)]);
    }
    return kept;
}

// The series `key` of each run, a hundred runs a request; one run at a time (its first page,
// thinned) where the server has no bulk call.
// `last_ms` gets each run's latest value's time.
std::map<std::string, StepSeries> read_series(MlflowApi& api, const std::string& key,
                                              const std::vector<std::string>& run_ids,
                                              std::size_t points, bool& bulk,
                                              std::map<std::string, std::int64_t>& last_ms) {
    std::map<std::string, StepSeries> series;
    for (std::size_t first = 0; first < run_ids.size(); first += MlflowHistories::kRunsPerRequest) {
        const std::vector<std::string> some(
            run_ids.begin() + long(first),
            run_ids.begin() +
                long(std::min(run_ids.size(), first + MlflowHistories::kRunsPerRequest)));
        if (bulk) {
            if (const auto values = history_in_bulk(api, key, some, points)) {
                for (const auto& [run_id, list] : *values) {
                    series[run_id] = step_series(list, last_ms[run_id]);
                }
                continue;
            }
            bulk = false;
        }
        for (const std::string& run_id : some) {
            const Json answer =
                api.get("metrics/get-history",
                        "run_id=" + url_escape(run_id) + "&metric_key=" + url_escape(key) +
                            "&max_results=" + std::to_string(kValuesPerHistoryPage));
            series[run_id] = thinned(
                step_series(answer.value("metrics", std::vector<Json>()), last_ms[run_id]), points);
        }
    }
    return series;
}

}  // namespace

ClassProgress read_class_progress(const MlflowSource& source, std::size_t points_per_run) {
    check_tracking_uri(source.tracking_uri, source.named.uri);
    MlflowApi api(source.tracking_uri, source.control);
    ClassProgress progress;
    try {
        const std::string experiment = followed_experiment(api, source);
        std::vector<std::string> run_ids;
        const std::string stopped = for_each_run(api, experiment, [&](Json& run) {
            const auto tags = key_values(run["data"].value("tags", Json::array()));
            const auto uid = tags.find(kUidTag);
            const Json& info = run["info"];
            if (uid == tags.end() || !info.is_object() ||
                !info.value("run_id", Json()).is_string()) {
                ++progress.not_from_oomlab;
                return;
            }
            ClassRun one;
            one.uid = uid->second;
            const auto user = tags.find(kUserTag);
            one.student = user == tags.end() ? "" : user->second;
            one.name = info.value("run_name", "");
            const auto status = tags.find("oomlab.status");
            one.status = status == tags.end()
                             ? RunStatus::Running
                             : parse_run_status(status->second).value_or(RunStatus::Running);
            one.whole = tags.count(kDigestTag) > 0;
            for (const auto& [key, value] : tags) {
                if (is_lesson_tag(key)) {
                    one.lesson_tags[key] = value;
                }
            }
            const auto fragmented = tags.find(kFragmentedTag);
            one.fragmented = fragmented != tags.end() && fragmented->second == "true";
            for (const Json& latest : run["data"].value("metrics", Json::array())) {
                if (latest.value("key", "") == "peak/total_MiB") {
                    one.peak_bytes =
                        bytes_of_mib(metric_value(latest.value("value", Json()))).value_or(0);
                }
            }
            progress.runs.push_back(std::move(one));
            run_ids.push_back(info["run_id"].get<std::string>());
        });
        if (!stopped.empty()) {
            progress.notes.push_back("MLflow's list of runs was read no further (" + stopped +
                                     "): the runs read are shown");
        }
        bool bulk = true;
        std::map<std::string, std::int64_t> last_ms;
        auto loss = read_series(api, kLossKey, run_ids, points_per_run, bulk, last_ms);
        auto memory = read_series(api, kMemoryKey, run_ids, points_per_run, bulk, last_ms);
        if (!bulk) {
            progress.notes.push_back(no_bulk_note(api.uri()));
        }
        for (std::size_t i = 0; i < run_ids.size(); ++i) {
            progress.runs[i].loss = std::move(loss[run_ids[i]]);
            progress.runs[i].memory = std::move(memory[run_ids[i]]);
            progress.runs[i].last_ms = last_ms[run_ids[i]];
        }
    } catch (const nlohmann::json::exception& error) {
        throw unlike_mlflow(api, error, "");
    }
    return progress;
}

namespace {

bool silent(const ClassRun& run, std::int64_t now_ms) {
    return run.status == RunStatus::Running && run.last_ms > 0 && now_ms - run.last_ms > kSilentMs;
}

std::string status_words(RunStatus status) {
    return status == RunStatus::Oom ? "out of memory" : std::string(run_status_name(status));
}

}  // namespace

std::string class_state(const ClassRun& run, std::int64_t now_ms) {
    if (!silent(run, now_ms)) {
        return status_words(run.status);
    }
    const std::int64_t minutes = (now_ms - run.last_ms) / 60000;
    return "running, no step for " +
           (minutes < 60 ? std::to_string(minutes) + " min" : std::to_string(minutes / 60) + " h");
}

std::string class_counts(const ClassProgress& progress, std::int64_t now_ms) {
    std::set<std::string> students;
    std::map<RunStatus, std::size_t> states;
    std::size_t silent_runs = 0;
    for (const ClassRun& run : progress.runs) {
        students.insert(run.student);
        if (silent(run, now_ms)) {
            ++silent_runs;
        } else {
            ++states[run.status];
        }
    }
    std::string text =
        counted(progress.runs.size(), "run") + " from " + counted(students.size(), "student");
    const char* separator = ": ";
    for (const auto& [status, count] : states) {
        text += separator + std::to_string(count) + " " + status_words(status);
        separator = ", ";
    }
    if (silent_runs > 0) {
        text += separator + std::to_string(silent_runs) +
                " silent (running, no step for over a minute)";
    }
    return text;
}

StepSeries class_median(const std::vector<const StepSeries*>& series, std::size_t points) {
    std::int64_t furthest = -1;
    for (const StepSeries* one : series) {
        if (!one->empty()) {
            furthest = std::max(furthest, one->back().step);
        }
    }
    if (furthest < 0 || points == 0) {
        return {};
    }
    StepSeries median;
    std::vector<double> values;
    std::int64_t last_step = -1;
    for (std::size_t i = 0; i < points; ++i) {
        const std::int64_t step =
            points == 1 ? furthest
                        : std::int64_t(double(furthest) * double(i) / double(points - 1));
        if (step == last_step) {
            continue;  // fewer steps than points
        }
        last_step = step;
        values.clear();
        for (const StepSeries* one : series) {
            if (one->empty() || one->front().step > step || one->back().step < step) {
                continue;
            }
            const auto after = std::upper_bound(
                one->begin(), one->end(), step,
                [](std::int64_t s, const StepValue& value) { return s < value.step; });
            values.push_back(std::prev(after)->value);
        }
        if (values.empty()) {
            continue;
        }
        const std::size_t middle = values.size() / 2;
        std::nth_element(values.begin(), values.begin() + long(middle), values.end());
        double value = values[middle];
        if (values.size() % 2 == 0) {
            value = (value + *std::max_element(values.begin(), values.begin() + long(middle))) / 2;
        }
        median.push_back({step, value});
    }
    return median;
}

}  // namespace oomlab::trackers
