// Reading what MLflow answers, shared by `runs import` and the class's live view: its lists in
// pages, its values, and the series of runs: the values of one key for a hundred runs in one
// request (metrics/get-history-bulk-interval, which MLflow's own UI compares runs with), and one
// run at a time (metrics/get-history, in pages) where the bulk answer may be a sample of the
// run's values or the server has no such call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "mlflow_api.h"
#include "oomlab/common/errors.h"
#include "oomlab/trackers/mlflow_import.h"

namespace oomlab::trackers {

inline constexpr int kValuesPerHistoryPage = 25000;  // metrics/get-history's most

using PageRequest = std::function<nlohmann::json(const std::string& token)>;

// MLflow's lists of key/value pairs (a run's tags, its parameters) as a map.
std::map<std::string, std::string> key_values(const nlohmann::json& list);
// A metric value as MLflow writes it: a number, or "NaN" / "Infinity" as text.
double metric_value(const nlohmann::json& value);
// A memory figure sent in MiB, in bytes; nullopt for one no device holds (negative, NaN,
// infinite, past 1 PiB), never stored as -5 MiB or INT64_MIN.
std::optional<std::int64_t> bytes_of_mib(double mib);
// A step or a time as MLflow gives it: a number, or a whole number in a string (protobuf's
// JSON for int64); NaN for anything else.
double whole_number(const nlohmann::json& value);

// Each item under `key` of an answer MLflow gives in pages, to `take` as its page arrives (one
// page held at a time): `page(token)` asks for the page after `token` ("" for the first).
// `take` returns false to read no further. Returns why the pages were left before the server
// said the last was given ("" when it did, or `take` stopped).
std::string for_each_item(const char* key, const PageRequest& page,
                          const std::function<bool(nlohmann::json&)>& take);

// The id of the experiment the class sends to; BadInput naming the field to set where the
// server has none of that name.
std::string followed_experiment(MlflowApi& api, const MlflowSource& source);
// What is said where the server has no bulk history call.
std::string no_bulk_note(const std::string& uri);
// The error for an answer of a shape no MLflow server gives (`error`: what was wrong with it),
// `then` said after it.
Error unlike_mlflow(const MlflowApi& api, const std::exception& error, const std::string& then);

// Each run of the experiment (those `filter` picks, in MLflow's search syntax, where given),
// oldest first, to `take` a page (1,000 runs) at a time; why the pages were left early, if
// they were.
std::string for_each_run(MlflowApi& api, const std::string& experiment_id,
                         const std::function<void(nlohmann::json&)>& take,
                         const std::string& filter = "");

// The values of `key` for each of `run_ids` (at most a hundred) in one request, by run: every
// value of a run with fewer than `most_per_run`, else a sample of its steps the server chose
// (the first and last among them). nullopt where the server has no such call (before MLflow 2.9).
std::optional<std::map<std::string, std::vector<nlohmann::json>>> history_in_bulk(
    MlflowApi& api, const std::string& key, const std::vector<std::string>& run_ids,
    std::size_t most_per_run);

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
