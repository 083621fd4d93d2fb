#include "oomlab/trackers/tensorboard_export.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <system_error>

#include "event_file.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/format.h"

namespace oomlab::trackers {
namespace fs = std::filesystem;
namespace {

// Field numbers of the HParams plugin's data (tensorboard/plugins/hparams/plugin_data.proto)
// and of google.protobuf.Value.
namespace hparams {
constexpr int kVersion = 1, kSessionStartInfo = 3, kSessionEndInfo = 4;
constexpr int kStartHparams = 1, kStartTimeSecs = 5;
constexpr int kEndStatus = 1, kEndTimeSecs = 2;
constexpr int kStatusSuccess = 1, kStatusFailure = 2, kStatusRunning = 3;
constexpr int kMapKey = 1, kMapValue = 2;
}  // namespace hparams
namespace protobuf_value {
constexpr int kNumber = 2, kString = 3, kBool = 4;
}

std::string hparams_plugin_data(int field, const ProtoMessage& info) {
    ProtoMessage data;
    data.varint(hparams::kVersion, 0).message(field, info);
    return data.serialized();
}

ProtoMessage session_start(const TrackedRun& tracked, double start_secs) {
    ProtoMessage info;
    for (const RunParam& param : run_params(tracked.run)) {
        ProtoMessage value;
        if (param.number) {
            value.float64(protobuf_value::kNumber, *param.number);
        } else if (param.flag) {
            value.varint(protobuf_value::kBool, *param.flag ? 1 : 0);
        } else {
            value.bytes(protobuf_value::kString, param.text);
        }
        ProtoMessage entry;
        entry.bytes(hparams::kMapKey, param.key).message(hparams::kMapValue, value);
        info.message(hparams::kStartHparams, entry);
    }
    info.float64(hparams::kStartTimeSecs, start_secs);
    return info;
}

int session_status(RunStatus status) {
    switch (status) {
        case RunStatus::Running:
            return hparams::kStatusRunning;
        case RunStatus::Completed:
            return hparams::kStatusSuccess;
        default:
            return hparams::kStatusFailure;
    }
}

std::string breakdown_table(const RunRecord& run) {
    std::string table = "| category | at the peak | predicted |\n|---|---:|---:|\n";
    for (std::size_t i = 0; i < kBreakdownKeys.size(); ++i) {
        table +=
            "| " + std::string(kBreakdownLabels[i]) + " | " +
            (run.outcome.has_breakdown() ? format_bytes(breakdown_field(run.outcome.breakdown, i))
                                         : std::string("not recorded")) +
            " | " +
            (run.prediction ? format_bytes(breakdown_field(run.prediction->breakdown, i))
                            : std::string("none")) +
            " |\n";
    }
    table += "| **total** | " + format_bytes(run.outcome.peak_bytes) + " | " +
             (run.prediction ? format_bytes(run.prediction->peak_bytes) : std::string("none")) +
             " |\n";
    return table;
}

std::string run_text(const TrackedRun& tracked) {
    const RunRecord& run = tracked.run;
    std::string text = "**" + run.name + "**: " + std::string(run_status_name(run.outcome.status)) +
                       " after " + std::to_string(run.outcome.steps) + " steps on " + run.device +
                       "\n\nOOM Lab run " + std::to_string(run.id) + " (" + tracked.uid + ")";
    if (!run.outcome.error.empty()) {
        text += "\n\n" + run.outcome.error;
    }
    return text;
}

}  // namespace

std::string tensorboard_run_folder(const TrackedRun& tracked) {
    std::string name;
    for (const char c : tracked.run.name) {
        const bool plain =
            std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
        name += plain ? c : '_';
    }
    return std::to_string(tracked.run.id) + "-" + name.substr(0, 48) + "-" +
           tracked.uid.substr(0, 8);
}

TensorBoardExport export_to_tensorboard(const TrackedRun& tracked, const std::string& log_dir) {
    const RunRecord& run = tracked.run;
    const double start = static_cast<double>(run_start_epoch_ms(run)) / 1000.0;
    const std::int64_t last_step = run.outcome.steps;
    const double end = start + run.outcome.wall_seconds;
    TensorBoardExport result;
    result.run_folder = tensorboard_run_folder(tracked);
    const fs::path folder = fs::path(log_dir) / result.run_folder;
    std::error_code error;
    fs::create_directories(folder, error);
    if (error) {
        throw Error("cannot make the folder " + folder.string() + ": " + error.message());
    }
    // One file per run, named by the run: a second export replaces the first.
    result.event_file =
        (folder / ("events.out.tfevents." + std::to_string(static_cast<std::int64_t>(start)) +
                   ".oomlab-" + tracked.uid))
            .string();
    EventFile events(result.event_file, start);

    events.add(start, 0,
               summary_of(plugin_value("_hparams_/session_start_info", "hparams",
                                       hparams_plugin_data(hparams::kSessionStartInfo,
                                                           session_start(tracked, start)))));
    // In step order across series: TensorBoard reads a step that goes back as a restarted
    // run and drops what came after it.
    const std::vector<Series> all_series = run_series(tracked);
    std::vector<std::pair<const Series*, const SeriesPoint*>> points;
    for (const Series& series : all_series) {
        for (const SeriesPoint& point : series.points) {
            points.emplace_back(&series, &point);
        }
    }
    std::stable_sort(points.begin(), points.end(),
                     [](const auto& a, const auto& b) { return a.second->step < b.second->step; });
    for (const auto& [series, point] : points) {
        events.add(start + point->wall_ms / 1000.0, point->step,
                   summary_of(scalar_value(series->name, static_cast<float>(point->value))));
        ++result.scalars;
    }
    for (const auto& [name, value] : final_values(run)) {
        events.add(end, last_step, summary_of(scalar_value(name, static_cast<float>(value))));
        ++result.scalars;
    }
    events.add(end, last_step,
               summary_of(text_value("breakdown", breakdown_table(run)),
                          text_value("run", run_text(tracked))));
    if (run.outcome.status != RunStatus::Running) {
        ProtoMessage info;
        info.varint(hparams::kEndStatus,
                    static_cast<std::uint64_t>(session_status(run.outcome.status)))
            .float64(hparams::kEndTimeSecs, end);
        events.add(end, last_step,
                   summary_of(plugin_value("_hparams_/session_end_info", "hparams",
                                           hparams_plugin_data(hparams::kSessionEndInfo, info))));
    }

    events.commit();
    return result;
}

std::string describe(const TrackedRun& tracked, const TensorBoardExport& written) {
    return "run " + std::to_string(tracked.run.id) + " -> TensorBoard " + written.event_file +
           " (" + std::to_string(written.scalars) + " scalar values)";
}

}  // namespace oomlab::trackers
