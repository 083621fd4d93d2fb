// The series of runs as `runs import` reads them from MLflow: the values of one key for a hundred
// runs in one request (metrics/get-history-bulk-interval, which MLflow's own UI compares runs
// with), and one run at a time (metrics/get-history, in pages) where the bulk answer may be a
// sample of the run's values or the server has no such call.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "mlflow_api.h"

namespace oomlab::trackers {

using PageRequest = std::function<nlohmann::json(const std::string& token)>;

// Each item under `key` of an answer MLflow gives in pages, to `take` as its page arrives (one
// page held at a time): `page(token)` asks for the page after `token` ("" for the first).
// `take` returns false to read no further. Returns why the pages were left before the server
// said the last was given ("" when it did, or `take` stopped).
std::string for_each_item(const char* key, const PageRequest& page,
                          const std::function<bool(nlohmann::json&)>& take);

// What one run may bring of its series: a million values (about 100 MiB as they are read),
// more than any run of the engine logs (a value a step and a series).
inline constexpr std::size_t kMostValuesPerRun = 1000000;

class MlflowHistories {
public:
    using Note = std::function<void(const std::string&)>;
    MlflowHistories(MlflowApi& api, Note note) : m_api(api), m_note(std::move(note)) {}

    // Reads ahead the series each run names (its MLflow id to the keys), a request for each key
    // and each hundred runs.
    void read_ahead(const std::map<std::string, std::set<std::string>>& keys_of_runs);
    // Every value of the run's `key`, up to `left` (counted down): what was read ahead, else
    // read now one page of the run at a time. What was read ahead of it is then forgotten.
    std::vector<nlohmann::json> values(const std::string& run_id, const std::string& key,
                                       std::size_t& left);

    // The bulk call's most runs a request, and its most values of a run: past those the server
    // samples the run's values, so a run that reaches it is read on its own.
    static constexpr std::size_t kRunsPerRequest = 100;
    static constexpr std::size_t kMostValuesInBulk = 2500;

private:
    void read_in_bulk(const std::string& key, const std::vector<std::string>& run_ids);
    std::vector<nlohmann::json> read_alone(const std::string& run_id, const std::string& key,
                                           std::size_t& left);
    // Said where a run brings more than kMostValuesPerRun values.
    void note_too_many(const std::string& run_id);

    MlflowApi& m_api;
    Note m_note;
    bool m_bulk = true;  // false once the server said it has no bulk call
    std::map<std::pair<std::string, std::string>, std::vector<nlohmann::json>> m_ahead;
};

}  // namespace oomlab::trackers
