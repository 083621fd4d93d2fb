#include "oomlab/launch/worker_report.h"

#include <sys/stat.h>

#include <cstdlib>
#include <iostream>

#include "oomlab/common/files.h"
#include "oomlab/common/json_parse.h"
#include "oomlab/config/value_parsing.h"

namespace oomlab {
namespace {

constexpr std::uint64_t kMaxReportBytes = 1 << 20;
constexpr const char* kRunFile = "run.json";
constexpr const char* kSearchFile = "batch_search.json";

std::string bad_input_file(int rank) {
    return "bad_input.rank" + std::to_string(rank) + ".json";
}

// Written through the shared output checks: never over a file that is not a report.
void write_report(const std::string& name, const nlohmann::ordered_json& report) {
    const char* folder = std::getenv(kWorkerReportVariable);
    if (folder == nullptr || *folder == '\0') {
        return;
    }
    const std::string path = std::string(folder) + "/" + name;
    try {
        OutputRules rules;
        rules.what = kWorkerReportVariable;
        rules.is_own_output = [](const std::string& existing) {
            return file_starts_with(existing, "{\"run_id\":") ||
                   file_starts_with(existing, "{\"batch_search_done\":") ||
                   file_starts_with(existing, "{\"message\":");
        };
        check_output_path(path, rules);
        // Messages may quote bytes of a file name that are not UTF-8.
        write_file_atomically(
            path, report.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    } catch (const std::exception& error) {
        std::cerr << "warning: cannot tell the launcher " << name << ": " << error.what() << '\n';
    }
}

// RANK as the launcher set it; a refusal of RANK itself is rank 0's, as far as it knows.
int reporting_rank() {
    if (const char* variable = std::getenv("RANK")) {
        try {
            return static_cast<int>(config_detail::parse_integer("RANK", variable, 0, 65535));
        } catch (const BadInput&) {
        }
    }
    return 0;
}

std::optional<nlohmann::json> read_report(const std::string& path) {
    struct stat info {};
    if (stat(path.c_str(), &info) != 0) {
        return std::nullopt;
    }
    try {
        return parse_json_limited(read_input_file(path, kWorkerReportVariable, kMaxReportBytes),
                                  path);
    } catch (const std::exception&) {
        return std::nullopt;  // not a report of ours: as if none were written
    }
}

}  // namespace

void report_run_id(std::int64_t run_id) {
    write_report(kRunFile, {{"run_id", run_id}});
}

void report_batch_search(const BatchSizeSearch& search, bool done) {
    if (reporting_rank() != 0) {
        return;  // every rank runs the same trials; rank 0 speaks for them
    }
    nlohmann::ordered_json trials = nlohmann::ordered_json::array();
    for (const BatchTrial& trial : search.trials) {
        trials.push_back({{"batch_size", trial.batch_size},
                          {"fits", trial.fits},
                          {"peak_bytes", trial.peak_bytes},
                          {"predicted_bytes", trial.predicted_bytes}});
    }
    write_report(kSearchFile, {{"batch_search_done", done},
                               {"batch_size", search.batch_size},
                               {"predicted", search.predicted},
                               {"cap_bytes", search.cap_bytes},
                               {"trials", trials}});
}

void report_bad_input(const BadInput& error) {
    write_report(bad_input_file(reporting_rank()),
                 {{"message", error.what()}, {"keys", error.keys()}});
}

std::optional<std::int64_t> WorkerReports::run_id() const {
    const auto report = read_report(m_folder + "/" + kRunFile);
    if (!report || !report->is_object() || !report->contains("run_id") ||
        !(*report)["run_id"].is_number_integer()) {
        return std::nullopt;
    }
    return (*report)["run_id"].get<std::int64_t>();
}

std::optional<WorkerReports::BatchSearch> WorkerReports::batch_search() const {
    const auto report = read_report(m_folder + "/" + kSearchFile);
    if (!report || !report->is_object()) {
        return std::nullopt;
    }
    try {
        BatchSearch reported;
        reported.done = report->at("batch_search_done").get<bool>();
        reported.search.batch_size = report->at("batch_size").get<int>();
        reported.search.predicted = report->at("predicted").get<int>();
        reported.search.cap_bytes = report->at("cap_bytes").get<std::int64_t>();
        for (const auto& trial : report->at("trials")) {
            reported.search.trials.push_back({trial.at("batch_size").get<int>(),
                                              trial.at("fits").get<bool>(),
                                              trial.at("peak_bytes").get<std::int64_t>(),
                                              trial.at("predicted_bytes").get<std::int64_t>()});
        }
        return reported;
    } catch (const nlohmann::json::exception&) {
        return std::nullopt;  // not a report of ours
    }
}

std::vector<BadInput> WorkerReports::bad_inputs(int world_size) const {
    std::vector<BadInput> refusals;
    for (int rank = 0; rank < world_size; ++rank) {
        const auto report = read_report(m_folder + "/" + bad_input_file(rank));
        if (!report || !report->is_object() || !report->contains("message") ||
            !(*report)["message"].is_string()) {
            continue;
        }
        std::vector<std::string> keys;
        if (report->contains("keys") && (*report)["keys"].is_array()) {
            for (const auto& key : (*report)["keys"]) {
                if (key.is_string()) {
                    keys.push_back(key.get<std::string>());
                }
            }
        }
        refusals.emplace_back((*report)["message"].get<std::string>(), std::move(keys));
    }
    return refusals;
}

}  // namespace oomlab
