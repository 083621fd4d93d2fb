#include "oomlab/run/run_json.h"

#include <iomanip>
#include <sstream>

#include <nlohmann/json.hpp>

#include "oomlab/common/files.h"
#include "oomlab/common/json_parse.h"
#include "oomlab/run/prediction_check.h"

namespace oomlab {
namespace {

using Json = nlohmann::ordered_json;

template <typename T>
Json optional_json(const std::optional<T>& value) {
    return value ? Json(*value) : Json(nullptr);
}

// A layer's activations or a step's temporaries, under the name of what they are.
Json module_object(const ModuleMemory& module) {
    return {{"module", module.module},
            {"parameters", module.parameters},
            {"gradients", module.gradients},
            {"optimizer_state", module.optimizer_state},
            {module.is_training_step() ? "temporaries" : "activations",
             optional_json(module.activations)}};
}

Json modules_array(const std::vector<ModuleMemory>& modules) {
    Json list = Json::array();
    for (const ModuleMemory& module : modules) {
        list.push_back(module_object(module));
    }
    return list;
}

Json fragmentation_object(const std::optional<Fragmentation>& f) {
    if (!f) {
        return nullptr;
    }
    return {{"requested_bytes", f->requested_bytes},
            {"reserved_free_bytes", f->reserved_free_bytes},
            {"largest_free_block", f->largest_free_block},
            {"free_blocks", f->free_blocks},
            {"unreserved_free_bytes", f->unreserved_free_bytes},
            {"fragmented", f->fragmented()}};
}

Json check_object(const PredictionCheck& check) {
    const auto rows = [](const std::vector<PredictionRow>& from) {
        Json list = Json::array();
        for (const PredictionRow& row : from) {
            list.push_back({{"category", row.category},
                            {"module", row.module},
                            {"predicted", row.predicted},
                            {"measured", row.measured},
                            {"disagrees", row.disagrees},
                            {"why", row.why}});
        }
        return list;
    };
    return {{"not_comparable", check.not_comparable},
            {"disagreements", check.disagreements()},
            {"by_category", rows(check.by_category)},
            {"by_module", rows(check.by_module)}};
}

// The fixes as stored: a list, or null where the stored text is not JSON (a damaged row;
// nlohmann's "discarded" value would be written as text no JSON reader takes).
Json stored_fixes(const std::string& text) {
    if (text.empty()) {
        return Json::array();
    }
    Json fixes = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    return fixes.is_discarded() ? Json(nullptr) : fixes;
}

// {"forward": 1.2, ...}: where the run's wall time went; empty for a run read back.
Json seconds_by_part(const std::vector<PartTime>& parts) {
    Json object = Json::object();
    for (const PartTime& part : parts) {
        object[part.part] = part.seconds;
    }
    return object;
}

Json summary_object(const RunRecord& run) {
    Json summary = {
        {"run_id", run.id},
        {"name", run.name},
        {"status", run_status_name(run.outcome.status)},
        {"steps", run.outcome.steps},
        {"final_train_loss", optional_json(run.outcome.final_train_loss)},
        {"val_accuracy", optional_json(run.outcome.val_accuracy)},
        {"peak_bytes", run.outcome.peak_bytes},
        {"wall_seconds", run.outcome.wall_seconds},
        {"seconds_by_part", seconds_by_part(run.outcome.time_by_part)},
        {"batch_size", run.outcome.batch_size},  // as the run ended (halve/adapt change it)
        {"accumulation", run.outcome.accumulation},
        {"device", run.device},
        {"created_at", run.created_at},
        {"finished_at", run.finished_at},
        {"engine_version", run.engine_version},
        {"torch_version", run.torch_version},
        {"error", run.outcome.error},
        {"tags", run.tags},
        {"breakdown", breakdown_value(run.outcome.breakdown)},
        // False for a run that ended without its summary (killed, or still training): its
        // breakdown's zeros are not measured figures.
        {"breakdown_recorded", run.outcome.has_breakdown()},
        {"by_module", modules_array(run.outcome.by_module)},
        {"staircase", Json::array()},
        {"fragmentation", fragmentation_object(run.outcome.fragmentation)},
        {"world_size", run.world_size},
        // The fixes offered when it ran out of memory, as the run's own summary listed them.
        {"fixes", stored_fixes(run.fixes_json)},
        {"fix_of", run.fix_of ? Json(*run.fix_of) : Json(nullptr)},
        {"tracker_tags", run.tracker_tags},
        {"ranks", Json::array()},
    };
    for (const RankMemory& rank : run.ranks) {
        summary["ranks"].push_back(
            {{"rank", rank.rank},
             {"status", rank.status ? Json(run_status_name(*rank.status)) : Json(nullptr)},
             {"steps", rank.steps},
             {"peak_bytes", rank.peak_bytes},
             {"parameters", rank.parameters},
             {"gradients", rank.gradients},
             {"optimizer_state", rank.optimizer_state}});
    }
    for (const MemoryStage& stage : run.outcome.staircase) {
        summary["staircase"].push_back(
            {{"stage", stage.stage},
             {"allocated_bytes", stage.allocated_bytes},
             {"device_used_bytes", optional_json(stage.device_used_bytes)}});
    }
    summary["prediction"] = run.prediction ? prediction_value(*run.prediction) : Json(nullptr);
    summary["against_prediction"] =
        run.prediction ? check_object(check_prediction(*run.prediction, run.outcome))
                       : Json(nullptr);
    return summary;
}

Json metric_object(const MetricRow& row) {
    return {{"rank", row.rank},
            {"step", row.step},
            {"phase", row.phase},
            {"wall_ms", row.wall_ms},
            {"loss", optional_json(row.loss)},
            {"accuracy", optional_json(row.accuracy)},
            {"allocated_bytes", optional_json(row.allocated_bytes)},
            {"reserved_bytes", optional_json(row.reserved_bytes)},
            {"peak_bytes", optional_json(row.peak_bytes)},
            {"device_used_bytes", optional_json(row.device_used_bytes)},
            {"device_total_bytes", optional_json(row.device_total_bytes)},
            {"alloc_retries", optional_json(row.alloc_retries)},
            {"oom_count", optional_json(row.oom_count)},
            {"samples_per_s", optional_json(row.samples_per_s)}};
}

template <typename T>
void csv_cell(std::ostringstream& out, const std::optional<T>& value) {
    out << ',';
    if (value) {
        out << *value;
    }
}

}  // namespace

Json module_memory_value(const std::vector<ModuleMemory>& modules) {
    return modules_array(modules);
}

Json breakdown_value(const MemoryBreakdown& breakdown) {
    Json value = Json::object();
    for (std::size_t i = 0; i < kBreakdownKeys.size(); ++i) {
        value[std::string(kBreakdownKeys[i])] = breakdown_field(breakdown, i);
    }
    return value;
}

Json prediction_value(const MemoryPrediction& prediction) {
    return {{"peak_bytes", prediction.peak_bytes},
            {"breakdown", breakdown_value(prediction.breakdown)},
            {"by_module", modules_array(prediction.by_module)},
            {"worst_batch_length", prediction.worst_batch_length},
            {"every_batch_worst", prediction.every_batch_worst}};
}

std::string run_summary_json(const RunRecord& run) {
    return summary_object(run).dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string run_export_json(const RunRecord& run, const std::vector<MetricRow>& metrics,
                            const std::vector<EventRow>& events, int indent) {
    Json document = summary_object(run);
    document["notes"] = run.notes;
    document["config"] = parse_json_limited<Json>(run.config_json.empty() ? "{}" : run.config_json,
                                                  "the config of run " + std::to_string(run.id));
    Json metric_rows = Json::array();
    for (const auto& row : metrics) {
        metric_rows.push_back(metric_object(row));
    }
    Json event_rows = Json::array();
    for (const auto& event : events) {
        event_rows.push_back(
            {{"step", event.step}, {"kind", event.kind}, {"message", event.message}});
    }
    document["metrics"] = std::move(metric_rows);
    document["events"] = std::move(event_rows);
    // Names and paths that are not valid UTF-8 are written with U+FFFD instead of failing.
    return document.dump(indent, ' ', false, Json::error_handler_t::replace);
}

bool is_run_export_file(const std::string& path) {
    return file_starts_with(path, "run_id,rank,step,phase,") ||
           file_starts_with(path, "step,phase,wall_ms,") ||  // exports before run_id and rank
           file_starts_with(path, "{\"run_id\":") || file_starts_with(path, "{\n  \"run_id\":") ||
           file_starts_with(path, "[\n{\n  \"run_id\":");
}

std::string tracker_tags_json(const std::map<std::string, std::string>& tags) {
    return tags.empty() ? std::string() : Json(tags).dump();
}

std::map<std::string, std::string> parse_tracker_tags(const std::string& text) {
    std::map<std::string, std::string> tags;
    const Json object = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (object.is_object()) {
        for (const auto& [key, value] : object.items()) {
            if (value.is_string()) {
                tags[key] = value.get<std::string>();
            }
        }
    }
    return tags;
}

std::string metrics_csv(const std::vector<RunMetrics>& runs) {
    std::ostringstream out;
    out << std::setprecision(10);
    out << "run_id,rank,step,phase,wall_ms,loss,accuracy,allocated_bytes,reserved_bytes,"
           "peak_bytes,device_used_bytes,samples_per_s,device_total_bytes,alloc_retries,"
           "oom_count\n";
    for (const RunMetrics& run : runs) {
        for (const auto& row : run.rows) {
            out << run.run_id << ',' << row.rank << ',' << row.step << ',' << row.phase << ','
                << row.wall_ms;
            csv_cell(out, row.loss);
            csv_cell(out, row.accuracy);
            csv_cell(out, row.allocated_bytes);
            csv_cell(out, row.reserved_bytes);
            csv_cell(out, row.peak_bytes);
            csv_cell(out, row.device_used_bytes);
            csv_cell(out, row.samples_per_s);
            csv_cell(out, row.device_total_bytes);
            csv_cell(out, row.alloc_retries);
            csv_cell(out, row.oom_count);
            out << '\n';
        }
    }
    return out.str();
}

}  // namespace oomlab
