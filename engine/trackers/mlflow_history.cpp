#include "mlflow_history.h"

#include <algorithm>
#include <optional>

#include "http_client.h"
#include "oomlab/common/errors.h"

namespace oomlab::trackers {

using Json = nlohmann::json;

namespace {

constexpr int kValuesPerPage = 25000;  // metrics/get-history's most

// A server that keeps naming a next page (the same token again, new ones with nothing on them)
// is followed no further than this: 10 million runs, or 250 million values of one series.
constexpr int kMostPages = 10000;

}  // namespace

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
    std::string query =
        "metric_key=" + url_escape(key) + "&max_results=" + std::to_string(kMostValuesInBulk) +
        // Every step asked for: with an interval MLflow's SQLite store finds a run's values by
        // its index, 0.25 s for a hundred runs instead of 2.1 s (the same values).
        "&start_step=-9223372036854775808&end_step=9223372036854775807";
    for (const std::string& run_id : run_ids) {
        query += "&run_ids=" + url_escape(run_id);
    }
    std::optional<Json> answer = m_api.get_if_served("metrics/get-history-bulk-interval", query);
    if (!answer) {
        // MLflow before 2.9: each run is read on its own.
        m_bulk = false;
        m_note("MLflow at " + m_api.uri() +
               " has no bulk history call (metrics/get-history-bulk-interval, MLflow 2.9 and "
               "later): each run's series were read one at a time");
        return;
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
    for (auto& [run_id, list] : values) {
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
                            "&max_results=" + std::to_string(kValuesPerPage);
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
