#include "oomlab/trackers/mlflow_import.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

#include "artifact_prefetch.h"
#include "http_client.h"
#include "mlflow_api.h"
#include "mlflow_history.h"
#include "mlflow_tags.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/format.h"
#include "oomlab/common/utf8.h"
#include "oomlab/config/config_io.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/run/run_json.h"
#include "oomlab/store/timestamp.h"
#include "oomlab/trackers/mlflow_export.h"
#include "oomlab/trackers/tracked_run.h"

namespace oomlab::trackers {
namespace {

// A run's summary.json is a few kilobytes to a megabyte (its modules and staircase).
constexpr std::size_t kMostSummaryBytes = std::size_t(16) << 20;

// Where a series sent by run_series() goes back in a metric row.
struct SeriesField {
    const char* name;
    std::string_view phase;
    std::optional<double> MetricRow::*real = nullptr;
    std::optional<std::int64_t> MetricRow::*bytes = nullptr;  // sent in MiB
};
const SeriesField kSeriesFields[] = {
    {"train/loss", phase::kStep, &MetricRow::loss},
    {"memory/allocated_MiB", phase::kStep, nullptr, &MetricRow::allocated_bytes},
    {"memory/reserved_MiB", phase::kStep, nullptr, &MetricRow::reserved_bytes},
    {"memory/peak_MiB", phase::kStep, nullptr, &MetricRow::peak_bytes},
    {"memory/device_used_MiB", phase::kStep, nullptr, &MetricRow::device_used_bytes},
    {"speed/samples_per_s", phase::kStep, &MetricRow::samples_per_s},
    {"eval/loss", phase::kEval, &MetricRow::loss},
    {"eval/accuracy", phase::kEval, &MetricRow::accuracy},
};

// Figures no run can have (1e300, NaN, "Infinity", negative memory, a step or rank below 0, a
// time past a century) are left out, never stored as INT64_MIN or -5 MiB.
constexpr double kMostSteps = double(std::int64_t(1) << 40);
constexpr double kMostWallMs = 100.0 * 365 * 24 * 3600 * 1000;
constexpr int kMostRank = (1 << 16) - 1;

std::optional<std::int64_t> count_of(double value) {
    if (!(value >= 0 && value <= kMostSteps)) {
        return std::nullopt;
    }
    return std::llround(value);
}

// The rank a series' key names ("rank 3/memory/peak_MiB"); none for a key that names none
// within 0 to kMostRank.
std::optional<int> rank_of(const std::string& key) {
    const std::size_t slash = key.find('/');
    int rank = -1;
    const auto [end, error] = std::from_chars(key.data() + 5, key.data() + slash, rank);
    if (error != std::errc() || end != key.data() + slash || rank < 0 || rank > kMostRank) {
        return std::nullopt;
    }
    return rank;
}

// A run's id as the server gave it, for a note; "?" where it gave none.
std::string run_id_of(const Json& run) {
    const auto info = run.find("info");
    if (info == run.end() || !info->is_object()) {
        return "?";
    }
    const auto id = info->find("run_id");
    return id != info->end() && id->is_string() ? id->get<std::string>() : "?";
}

// The series a metric's key names ("train/loss", "rank 3/train/loss"): its field, none for a
// final value (final/..., peak/..., predicted/...: in the summary), and its rank, -1 where a
// rank prefix names none from 0 to kMostRank.
struct NamedSeries {
    const SeriesField* field = nullptr;
    int rank = 0;
};

NamedSeries named_series(std::string key) {
    NamedSeries series;
    if (key.rfind("rank ", 0) == 0 && key.find('/') != std::string::npos) {
        series.rank = rank_of(key).value_or(-1);
        key = key.substr(key.find('/') + 1);
    }
    const auto field = std::find_if(std::begin(kSeriesFields), std::end(kSeriesFields),
                                    [&](const SeriesField& f) { return key == f.name; });
    series.field = field == std::end(kSeriesFields) ? nullptr : field;
    return series;
}

using Note = std::function<void(const std::string&)>;

// The run's step and validation rows from its series, in the order they were measured.
std::vector<MetricRow> rows_of(MlflowHistories& histories, const Json& run, std::int64_t start_ms,
                               const Note& note) {
    const std::string run_id = run.at("info").at("run_id").get<std::string>();
    std::size_t left = kMostValuesPerRun;
    std::map<std::tuple<int, std::string_view, std::int64_t>, MetricRow> rows;
    std::size_t left_out = 0;
    for (const Json& latest : run["data"].value("metrics", Json::array())) {
        const std::string key = latest.value("key", "");
        const auto [field, rank] = named_series(key);
        if (rank < 0) {
            note("run " + run_id + "'s series \"" + printable_line(key.substr(0, 40)) +
                 "\" names no rank from 0 to " + std::to_string(kMostRank) + ": left out");
            continue;
        }
        if (!field) {
            continue;
        }
        for (const Json& value : histories.values(run_id, key, left)) {
            const std::optional<std::int64_t> step =
                count_of(value.contains("step") ? whole_number(value["step"]) : 0);
            const double wall_ms = (value.contains("timestamp") ? whole_number(value["timestamp"])
                                                                : double(start_ms)) -
                                   double(start_ms);
            const double number = metric_value(value["value"]);
            const std::optional<std::int64_t> bytes =
                field->bytes ? bytes_of_mib(number) : std::optional<std::int64_t>(0);
            if (!step || !(std::abs(wall_ms) <= kMostWallMs) || !bytes) {
                ++left_out;
                continue;
            }
            MetricRow& row = rows[{rank, field->phase, *step}];
            row.rank = rank;
            row.step = *step;
            row.phase = std::string(field->phase);
            row.wall_ms = wall_ms;
            if (field->real) {
                row.*(field->real) = number;
            } else {
                row.*(field->bytes) = *bytes;
            }
        }
    }
    if (left_out > 0) {
        note("run " + run_id + ": " + std::to_string(left_out) +
             " metric values no run can have (a negative or infinite memory figure, a step "
             "below 0, a time past a century) were left out");
    }
    std::vector<MetricRow> ordered;
    for (auto& [key, row] : rows) {
        ordered.push_back(std::move(row));
    }
    std::stable_sort(ordered.begin(), ordered.end(), [](const MetricRow& a, const MetricRow& b) {
        return std::tie(a.wall_ms, a.step, a.rank) < std::tie(b.wall_ms, b.step, b.rank);
    });
    return ordered;
}

// The settings from the run's parameters, each read as the config key it names; `unknown`
// gets those this version does not know (they keep their defaults).
std::string config_of(const Json& params, std::vector<std::string>& unknown) {
    ExperimentConfig config;
    for (const auto& [key, value] : key_values(params)) {
        try {
            apply_config_override(config, key + "=" + value);
        } catch (const BadInput&) {
            unknown.push_back(key + "=" + value);
        }
    }
    return config_to_json(config);
}

// A time of MLflow (milliseconds since 1970) as the store writes times.
std::string utc_text(std::int64_t epoch_ms) {
    return store::iso8601_utc(
        std::chrono::system_clock::time_point(std::chrono::milliseconds(epoch_ms)));
}

// The series this version imports that a run names (as MLflow keys them: "rank 1/..." too).
std::set<std::string> series_keys(const Json& run) {
    std::set<std::string> keys;
    for (const Json& latest : run["data"].value("metrics", Json::array())) {
        const std::string key = latest.value("key", "");
        const NamedSeries series = named_series(key);
        if (series.field && series.rank >= 0) {
            keys.insert(key);
        }
    }
    return keys;
}

class Importer {
public:
    Importer(MlflowApi& api, const RequestControl& control)
        : m_api(api),
          m_control(control),
          m_histories(api, [this](const std::string& text) { note(text); }) {}

    // Reads ahead what the runs about to be read need: the whole-run files of those that have
    // one, fetched on another thread as they are read; the others' series, a request for a
    // hundred runs' series.
    void read_ahead(const std::vector<Json>& runs) {
        std::map<std::string, std::set<std::string>> keys;
        std::vector<ArtifactPrefetch::Wanted> files;
        m_file_of_run.clear();
        for (const Json& run : runs) {
            if (key_values(run["data"].value("tags", Json::array())).count(kWholeRunTag)) {
                m_file_of_run[run_id_of(run)] = files.size();
                files.push_back({run["info"].value("artifact_uri", ""), kWholeRunFile});
            } else {
                keys[run_id_of(run)] = series_keys(run);
            }
        }
        m_files.reset();
        if (!files.empty()) {
            m_files = std::make_unique<ArtifactPrefetch>(m_api, m_control, std::move(files));
        }
        m_histories.read_ahead(keys);
    }

    // The run whole, from what the server holds of it.
    WholeRun read(const Json& run, const std::map<std::string, std::string>& tags) {
        const Json& info = run.at("info");
        const std::string mlflow_id = info.at("run_id").get<std::string>();
        const std::int64_t start_ms = info.value("start_time", std::int64_t{0});
        WholeRun whole;
        whole.uid = tags.at(kUidTag);
        if (!is_run_uid(whole.uid)) {
            throw BadInput("run " + mlflow_id + "'s " + kUidTag + " tag is " +
                           quoted_excerpt(whole.uid) +
                           ", which OOM Lab never sends (it sends 32 hexadecimal digits)");
        }
        const std::string artifact_uri = info.value("artifact_uri", "");
        if (tags.count(kWholeRunTag)) {
            if (std::optional<RunExport> file = whole_run_file(artifact_uri, mlflow_id)) {
                whole.run = std::move(file->run);
                whole.metrics = std::move(file->metrics);
                whole.events = std::move(file->events);
                with_mlflow_names(whole, run, tags);
                return whole;
            }
        }
        const std::optional<std::string> summary = m_api.get_artifact(artifact_uri, "summary.json");
        if (summary && summary->size() > kMostSummaryBytes) {
            throw BadInput("run " + mlflow_id + "'s summary.json holds " +
                           std::to_string(summary->size()) +
                           " bytes, more than any run's (at "
                           "most " +
                           std::to_string(kMostSummaryBytes) + ")");
        }
        if (summary) {
            whole.run = run_from_summary_json(*summary, "run " + mlflow_id + "'s summary.json");
        } else {
            whole.run = from_tags(run, tags);
            without_summary.push_back(mlflow_id);
        }
        std::vector<std::string> unknown;
        whole.run.config_json = config_of(run["data"].value("params", Json::array()), unknown);
        unknown_settings.insert(unknown.begin(), unknown.end());
        with_mlflow_names(whole, run, tags);
        whole.metrics =
            rows_of(m_histories, run, start_ms, [this](const std::string& text) { note(text); });
        ++from_series;
        return whole;
    }

    void note(const std::string& text) {
        if (m_noted.insert(text).second) {
            notes.push_back(text);
        }
    }

    std::vector<std::string> notes;
    std::set<std::string> unknown_settings;    // KEY=VALUE, over every run read
    std::vector<std::string> without_summary;  // MLflow's ids of the runs
    std::size_t from_series = 0;               // runs read from their series, not whole

private:
    std::set<std::string> m_noted;

    // The run's run.json, or none where the server does not serve it (or it is too large to
    // read whole: its series are read instead).
    std::optional<RunExport> whole_run_file(const std::string& artifact_uri,
                                            const std::string& mlflow_id) {
        const auto fetched = m_file_of_run.find(mlflow_id);
        const std::optional<std::string> text =
            fetched == m_file_of_run.end() ? m_api.get_artifact(artifact_uri, kWholeRunFile)
                                           : m_files->take(fetched->second);
        if (!text || text->size() > kMostWholeRunBytes) {
            return std::nullopt;
        }
        return run_from_export_json(*text, "run " + mlflow_id + "'s " + kWholeRunFile);
    }

    // What the server says of the run over what its files say: its times, its student's
    // name, its note, the lesson's tags (with either).
    static void with_mlflow_names(WholeRun& whole, const Json& run,
                                  const std::map<std::string, std::string>& tags) {
        const Json& info = run.at("info");
        const std::int64_t start_ms = info.value("start_time", std::int64_t{0});
        for (const auto& [key, value] : tags) {
            if (is_lesson_tag(key)) {
                whole.run.tracker_tags[key] = value;
            }
        }
        whole.run.created_at = utc_text(start_ms);
        whole.run.finished_at = utc_text(info.value("end_time", start_ms));
        const auto user = tags.find(kUserTag);
        const std::string student = user == tags.end() ? "" : user->second;
        whole.run.name = (student.empty() ? "" : student + ": ") + run_name(run, whole.run);
        if (const auto note_tag = tags.find("mlflow.note.content"); note_tag != tags.end()) {
            whole.run.notes = note_tag->second;
        }
    }

    static std::string run_name(const Json& run, const RunRecord& record) {
        const std::string name = run.at("info").value("run_name", "");
        return name.empty() ? record.name : name;
    }

    // Without a summary: the status, steps and figures its tags and final values give.
    static RunRecord from_tags(const Json& run, const std::map<std::string, std::string>& tags) {
        RunRecord record;
        const auto tag = [&](const char* key) {
            const auto found = tags.find(key);
            return found == tags.end() ? std::string() : found->second;
        };
        record.outcome.status = parse_run_status(tag("oomlab.status")).value_or(RunStatus::Failed);
        record.outcome.error = tag("oomlab.error");
        record.device = tag("oomlab.device");
        record.engine_version = tag("oomlab.engine_version");
        record.torch_version = tag("oomlab.torch_version");
        record.tags = tag("oomlab.tags");
        record.world_size =
            std::clamp(std::atoi(tag("oomlab.world_size").c_str()), 1, kMostRank + 1);
        RunOutcome& outcome = record.outcome;
        for (const Json& metric : run["data"].value("metrics", Json::array())) {
            const std::string key = metric.value("key", "");
            const double value = metric_value(metric["value"]);
            if (key == "final/steps") {
                outcome.steps = count_of(value).value_or(0);
            } else if (key == "final/wall_seconds") {
                outcome.wall_seconds = std::isfinite(value) && value >= 0 ? value : 0;
            } else if (key == "final/train_loss") {
                outcome.final_train_loss = value;
            } else if (key == "final/val_accuracy") {
                outcome.val_accuracy = value;
            } else if (key == "peak/total_MiB") {
                outcome.peak_bytes = bytes_of_mib(value).value_or(0);
            }
            for (std::size_t i = 0; i < kBreakdownKeys.size(); ++i) {
                if (key == "peak/" + std::string(kBreakdownKeys[i]) + "_MiB") {
                    breakdown_field(outcome.breakdown, i) = bytes_of_mib(value).value_or(0);
                }
            }
        }
        return record;
    }

    MlflowApi& m_api;
    RequestControl m_control;
    MlflowHistories m_histories;
    std::map<std::string, std::size_t> m_file_of_run;  // MLflow's run id: its place in m_files
    std::unique_ptr<ArtifactPrefetch> m_files;
};

}  // namespace

MlflowImport import_from_mlflow(RunStore& store, const MlflowSource& source) {
    check_tracking_uri(source.tracking_uri, source.named.uri);
    MlflowApi api(source.tracking_uri, source.control);
    MlflowImport result;
    try {
        const std::string experiment = followed_experiment(api, source);
        Importer importer(api, source.control);
        // The runs to import, a hundred at a time: their series are read ahead together.
        std::vector<Json> pending;
        const auto import_pending = [&] {
            importer.read_ahead(pending);
            for (const Json& run : pending) {
                try {
                    const auto tags = key_values(run["data"].value("tags", Json::array()));
                    if (const auto here = store.run_with_uid(tags.at(kUidTag))) {
                        ++result.already_here;  // sent twice: the copy read before is kept
                        result.present.push_back(*here);
                        continue;
                    }
                    result.added.push_back(store.add_whole_run(importer.read(run, tags)));
                    result.present.push_back(result.added.back());
                } catch (const BadInput& error) {
                    importer.note(std::string("a run was left on the server: ") + error.what());
                } catch (const nlohmann::json::exception& error) {
                    // One student's run that cannot be read is skipped; the others are not.
                    importer.note("a run was left on the server: run " + run_id_of(run) +
                                  " could not be read (" + error.what() + ")");
                }
            }
            pending.clear();
        };
        const std::string stopped = for_each_run(api, experiment, [&](Json& run) {
            const auto tags = key_values(run["data"].value("tags", Json::array()));
            if (!tags.count(kUidTag)) {
                ++result.not_from_oomlab;
            } else if (!tags.count(kDigestTag)) {
                ++result.being_sent;  // the digest is sent last: only whole exports carry it
            } else if (++result.on_server; const auto here = store.run_with_uid(tags.at(kUidTag))) {
                ++result.already_here;
                result.present.push_back(*here);
            } else if (pending.push_back(std::move(run));
                       pending.size() == MlflowHistories::kRunsPerRequest) {
                import_pending();
            }
        });
        import_pending();
        if (!stopped.empty()) {
            importer.note("MLflow's list of runs was read no further (" + stopped +
                          "): the runs read are imported");
        }
        if (!importer.unknown_settings.empty()) {
            importer.note(unknown_settings_note(importer.unknown_settings));
        }
        // Said once, with the count: a class of 30 whose server keeps no artifacts made 30.
        if (!importer.without_summary.empty()) {
            importer.note(without_summary_note(importer.without_summary));
        }
        result.without_summary = std::move(importer.without_summary);
        result.notes = std::move(importer.notes);
        if (importer.from_series > 0) {
            result.notes.push_back(
                "MLflow holds a run's series at the end of each step and validation, timed to "
                "the millisecond: the rows of each phase (forward, backward, update, the "
                "validation pass's memory), the allocator's retry and out-of-memory counts and "
                "the run's events are not there");
        }
    } catch (const nlohmann::json::exception& error) {
        throw unlike_mlflow(api, error, " Runs imported before are kept");
    }
    return result;
}

}  // namespace oomlab::trackers
