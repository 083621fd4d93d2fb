#include "oomlab/trackers/tracked_run.h"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "oomlab/common/errors.h"
#include "oomlab/common/utf8.h"

namespace oomlab::trackers {
namespace {

// The series of one rank, in the order a tracker lists them.
struct RankSeries {
    Series loss{"train/loss", {}};
    Series allocated{"memory/allocated_MiB", {}};
    Series reserved{"memory/reserved_MiB", {}};
    Series peak{"memory/peak_MiB", {}};
    Series device_used{"memory/device_used_MiB", {}};
    Series speed{"speed/samples_per_s", {}};
    Series eval_loss{"eval/loss", {}};
    Series eval_accuracy{"eval/accuracy", {}};

    std::vector<Series*> all() {
        return {&loss,        &allocated, &reserved,  &peak,
                &device_used, &speed,     &eval_loss, &eval_accuracy};
    }
};

template <typename T>
void add(Series& series, const MetricRow& row, const std::optional<T>& value, double scale = 1) {
    if (value) {
        series.points.push_back({row.step, row.wall_ms, static_cast<double>(*value) / scale});
    }
}

void flatten(const nlohmann::json& value, const std::string& key, std::vector<RunParam>& out) {
    if (value.is_object()) {
        for (const auto& [name, child] : value.items()) {
            flatten(child, key.empty() ? name : key + "." + name, out);
        }
        return;
    }
    RunParam param{key, value.is_string() ? value.get<std::string>() : value.dump(), {}, {}};
    if (value.is_number()) {
        param.number = value.get<double>();
    } else if (value.is_boolean()) {
        param.flag = value.get<bool>();
    }
    out.push_back(std::move(param));
}

}  // namespace

bool is_run_uid(const std::string& uid) {
    return uid.size() <= 64 && std::all_of(uid.begin(), uid.end(), [](char c) {
               return std::isxdigit(static_cast<unsigned char>(c)) != 0;
           });
}

TrackedRun tracked_run(const RunStore& store, std::int64_t run_id) {
    std::optional<RunRecord> run = store.find_run(run_id);
    if (!run) {
        throw BadInput("ID: there is no run " + std::to_string(run_id) + " in " + store.path());
    }
    std::string uid = store.run_uid(run_id);
    if (!is_run_uid(uid)) {
        throw BadInput("run " + std::to_string(run_id) + " of " + store.path() + " has the uid " +
                       quoted_excerpt(uid) +
                       ", which OOM Lab never writes (it writes 32 hexadecimal digits): the "
                       "database was changed outside OOM Lab; the run is not sent");
    }
    return {std::move(*run), std::move(uid), store.metrics(run_id), store.events(run_id)};
}

std::vector<Series> run_series(const TrackedRun& tracked) {
    std::map<int, RankSeries> ranks;
    for (const MetricRow& row : tracked.metrics) {
        RankSeries& rank = ranks[row.rank];
        if (row.phase == phase::kStep) {
            add(rank.loss, row, row.loss);
            add(rank.allocated, row, row.allocated_bytes, kBytesPerMiB);
            add(rank.reserved, row, row.reserved_bytes, kBytesPerMiB);
            add(rank.peak, row, row.peak_bytes, kBytesPerMiB);
            add(rank.device_used, row, row.device_used_bytes, kBytesPerMiB);
            add(rank.speed, row, row.samples_per_s);
        } else if (row.phase == phase::kEval) {
            add(rank.eval_loss, row, row.loss);
            add(rank.eval_accuracy, row, row.accuracy);
        }
    }
    std::vector<Series> series;
    for (auto& [rank, of_rank] : ranks) {
        for (Series* one : of_rank.all()) {
            if (one->points.empty()) {
                continue;
            }
            if (rank != 0) {
                one->name = "rank " + std::to_string(rank) + "/" + one->name;
            }
            series.push_back(std::move(*one));
        }
    }
    return series;
}

std::vector<std::pair<std::string, double>> final_values(const RunRecord& run) {
    std::vector<std::pair<std::string, double>> values;
    const RunOutcome& outcome = run.outcome;
    values.emplace_back("final/steps", static_cast<double>(outcome.steps));
    values.emplace_back("final/wall_seconds", outcome.wall_seconds);
    if (outcome.final_train_loss) {
        values.emplace_back("final/train_loss", *outcome.final_train_loss);
    }
    if (outcome.val_accuracy) {
        values.emplace_back("final/val_accuracy", *outcome.val_accuracy);
    }
    values.emplace_back("peak/total_MiB", static_cast<double>(outcome.peak_bytes) / kBytesPerMiB);
    if (outcome.has_breakdown()) {
        for (std::size_t i = 0; i < kBreakdownKeys.size(); ++i) {
            values.emplace_back(
                "peak/" + std::string(kBreakdownKeys[i]) + "_MiB",
                static_cast<double>(breakdown_field(outcome.breakdown, i)) / kBytesPerMiB);
        }
    }
    if (run.prediction) {
        values.emplace_back("predicted/total_MiB",
                            static_cast<double>(run.prediction->peak_bytes) / kBytesPerMiB);
        for (std::size_t i = 0; i < kBreakdownKeys.size(); ++i) {
            values.emplace_back(
                "predicted/" + std::string(kBreakdownKeys[i]) + "_MiB",
                static_cast<double>(breakdown_field(run.prediction->breakdown, i)) / kBytesPerMiB);
        }
    }
    return values;
}

std::vector<RunParam> run_params(const RunRecord& run) {
    std::vector<RunParam> params;
    const auto config = nlohmann::json::parse(run.config_json, nullptr, /*allow_exceptions=*/false);
    if (!config.is_discarded()) {
        flatten(config, "", params);  // objects iterate in key order: sorted
    }
    return params;
}

std::int64_t run_start_epoch_ms(const RunRecord& run) {
    std::tm time{};
    std::istringstream text(run.created_at);
    text >> std::get_time(&time, "%Y-%m-%dT%H:%M:%S");
    if (text.fail()) {
        return 0;
    }
    int millis = 0;
    if (text.peek() == '.') {
        text.get();
        text >> millis;
    }
    return static_cast<std::int64_t>(timegm(&time)) * 1000 + millis;
}

}  // namespace oomlab::trackers
