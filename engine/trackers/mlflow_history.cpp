#include "mlflow_history.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>

#include "http_client.h"
#include "mlflow_api.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/format.h"
#include "oomlab/common/utf8.h"
#include "oomlab/trackers/mlflow_export.h"

namespace oomlab::trackers {

namespace {

// A server that keeps naming a next page (the same token again, new ones with nothing on them)
// is followed no further than this: 10 million runs, or 250 million values of one series.
constexpr int kMostPages = 10000;
constexpr int kRunsPerPage = 1000;  // runs/search's most

}  // namespace

std::map<std::string, std::string> key_values(const Json& list) {
    std::map<std::string, std::string> values;
    for (const Json& item : list) {
        values[item.value("key", "")] = item.value("value", "");
    }
    return values;
}

double metric_value(const Json& value) {
    if (value.is_number()) {
        return value.get<double>();
    }
    const std::string text = value.is_string() ? value.get<std::string>() : "NaN";
    if (text == "Infinity") {
        return INFINITY;
    }
    return text == "-Infinity" ? -INFINITY : NAN;
}

std::optional<std::int64_t> bytes_of_mib(double mib) {
    const double bytes = mib * kBytesPerMiB;
    if (!(bytes >= 0 && bytes <= double(kMostDeviceBytes))) {  // NaN fails too
        return std::nullopt;
    }
    return std::llround(bytes);
}

double whole_number(const Json& value) {
    if (value.is_number()) {
        return value.get<double>();
    }
    if (!value.is_string()) {
        return NAN;
    }
    const std::string& text = value.get_ref<const std::string&>();
    std::int64_t number = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
    return error == std::errc() && end == text.data() + text.size() ? double(number) : NAN;
}

std::string for_each_item(const char* key, const PageRequest& page,
                          const std::function<bool(Json&)>& take) {
    std::set<std::string> seen;
    std::string token;
    for (int pages = 1;; ++pages) {
        Json answer = page(token);
        std::size_t items = 0;
        for (Json& item : answer[key]) {
            ++items;
            if (!take(item)) {
                return "";
            }
        }
        token = answer.value("next_page_token", "");
        if (token.empty()) {
            return "";
        }
        if (items == 0) {
            return "a page with nothing on it named a next page";
        }
        if (!seen.insert(token).second) {
            return "it named a next page it had named before";
        }
        if (pages == kMostPages) {
            return "it named a next page after " + std::to_string(kMostPages) + " pages";
        }
    }
}

std::string followed_experiment(MlflowApi& api, const MlflowSource& source) {
    const std::optional<std::string> experiment = api.find_experiment(source.experiment);
    if (!experiment) {
        throw BadInput("MLflow at " + uri_without_password(source.tracking_uri) +
                       " has no experiment " + quoted_excerpt(source.experiment) +
                       ": give the one the class sends to in " + source.named.experiment +
                       " (OOM Lab sends to \"OOM Lab\" unless told another)");
    }
    return *experiment;
}

std::string no_bulk_note(const std::string& uri) {
    return "MLflow at " + uri +
           " has no bulk history call (metrics/get-history-bulk-interval, MLflow 2.9 and "
           "later): each run's series were read one at a time";
}

Error unlike_mlflow(const MlflowApi& api, const std::exception& error, const std::string& then) {
    return Error("MLflow at " + api.uri() + " answered " + api.last_call() +
                 " in a shape no MLflow tracking server answers in (" + error.what() +
                 "): is this the address of an MLflow server?" + then);
}

std::string for_each_run(MlflowApi& api, const std::string& experiment_id,
                         const std::function<void(Json&)>& take, const std::string& filter) {
    const PageRequest page = [&](const std::string& token) {
        Json request = {{"experiment_ids", {experiment_id}},
                        {"max_results", kRunsPerPage},
                        {"order_by", {"attributes.start_time ASC"}}};
        if (!filter.empty()) {
            request["filter"] = filter;
        }
        if (!token.empty()) {
            request["page_token"] = token;
        }
        return api.post("runs/search", request);
    };
    return for_each_item("runs", page, [&](Json& run) {
        take(run);
        return true;
    });
}

std::optional<std::map<std::string, std::vector<Json>>> history_in_bulk(
    MlflowApi& api, const std::string& key, const std::vector<std::string>& run_ids,
    std::size_t most_per_run) {
    std::string query =
        "metric_key=" + url_escape(key) + "&max_results=" + std::to_string(most_per_run) +
        // Every step asked for: with an interval MLflow's SQLite store finds a run's values by
        // its index, 0.25 s for a hundred runs instead of 2.1 s (the same values).
        "&start_step=-9223372036854775808&end_step=9223372036854775807";
    for (const std::string& run_id : run_ids) {
        query += "&run_ids=" + url_escape(run_id);
    }
    std::optional<Json> answer = api.get_if_served("metrics/get-history-bulk-interval", query);
    if (!answer) {
        return std::nullopt;
    }
    std::map<std::string, std::vector<Json>> values;
    for (const std::string& run_id : run_ids) {
        values[run_id];  // read, if with no value
    }
    for (Json& value : (*answer)["metrics"]) {
        const auto run_id = value.find("run_id");
        if (run_id != value.end() && run_id->is_string() &&
            values.count(run_id->get<std::string>())) {
            values[run_id->get<std::string>()].push_back(std::move(value));
        }
    }
    return values;
}

void MlflowHistories::read_ahead(const std::map<std::string, std::set<std::string>>& keys_of_runs) {
    std::map<std::string, std::vector<std::string>> runs_of_keys;
    for (const auto& [run_id, keys] : keys_of_runs) {
        for (const std::string& key : keys) {
            runs_of_keys[key].push_back(run_id);
        }
    }
    for (const auto& [key, run_ids] : runs_of_keys) {
        for (std::size_t first = 0; m_bulk && first < run_ids.size(); first += kRunsPerRequest) {
            const std::size_t end = std::min(run_ids.size(), first + kRunsPerRequest);
            read_in_bulk(key, {run_ids.begin() + long(first), run_ids.begin() + long(end)});
        }
    }
}

void MlflowHistories::read_in_bulk(const std::string& key,
                                   const std::vector<std::string>& run_ids) {
    auto values = history_in_bulk(m_api, key, run_ids, kMostValuesInBulk);
    if (!values) {
        // MLflow before 2.9: each run is read on its own.
        m_bulk = false;
        m_note(no_bulk_note(m_api.uri()));
        return;
    }
    for (auto& [run_id, list] : *values) {
        if (list.size() < kMostValuesInBulk) {  // else perhaps a sample: read on its own
            m_ahead[{run_id, key}] = std::move(list);
        }
    }
}

std::vector<Json> MlflowHistories::values(const std::string& run_id, const std::string& key,
                                          std::size_t& left) {
    const auto ahead = m_ahead.find({run_id, key});
    if (ahead == m_ahead.end()) {
        return read_alone(run_id, key, left);
    }
    std::vector<Json> values = std::move(ahead->second);
    m_ahead.erase(ahead);
    if (values.size() > left) {
        values.resize(left);
        note_too_many(run_id);
    }
    left -= values.size();
    return values;
}

void MlflowHistories::note_too_many(const std::string& run_id) {
    m_note("run " + run_id + " holds more than " + std::to_string(kMostValuesPerRun) +
           " metric values: its first " + std::to_string(kMostValuesPerRun) + " are imported");
}

std::vector<Json> MlflowHistories::read_alone(const std::string& run_id, const std::string& key,
                                              std::size_t& left) {
    std::vector<Json> values;
    const PageRequest page = [&](const std::string& token) {
        std::string query = "run_id=" + url_escape(run_id) + "&metric_key=" + url_escape(key) +
                            "&max_results=" + std::to_string(kValuesPerHistoryPage);
        if (!token.empty()) {
            query += "&page_token=" + url_escape(token);
        }
        return m_api.get("metrics/get-history", query);
    };
    const std::string stopped = for_each_item("metrics", page, [&](Json& value) {
        if (left == 0) {
            note_too_many(run_id);
            return false;
        }
        --left;
        values.push_back(std::move(value));
        return true;
    });
    if (!stopped.empty()) {
        m_note("MLflow's history of " + key + " for run " + run_id + " was read no further (" +
               stopped + "): the values read are imported");
    }
    return values;
}

}  // namespace oomlab::trackers
