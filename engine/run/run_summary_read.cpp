// A run's summary object (run_summary_json) and whole export (run_export_json) read back: what
// a tracker keeps of a run that another machine trained.
#include <nlohmann/json.hpp>

#include "oomlab/common/errors.h"
#include "oomlab/common/format.h"
#include "oomlab/common/json_parse.h"
#include "oomlab/run/prediction_check.h"
#include "oomlab/run/run_json.h"

namespace oomlab {
namespace {

using Json = nlohmann::ordered_json;

// More steps, processes or examples a batch than any run has.
constexpr std::int64_t kMostSteps = std::int64_t(1) << 40;
constexpr std::int64_t kMostProcesses = 1 << 16;
constexpr std::int64_t kMostBatch = INT32_MAX;

// Reads the summary's keys, each error naming the key.
class SummaryReader {
public:
    SummaryReader(const Json& document, std::string source)
        : m_document(document), m_source(std::move(source)) {}

    template <typename T>
    T get(const Json& object, const std::string& key, T otherwise, const std::string& path) const {
        const auto found = object.find(key);
        if (found == object.end() || found->is_null()) {
            return otherwise;
        }
        try {
            return found->get<T>();
        } catch (const nlohmann::json::exception&) {
            throw BadInput(m_source + ": " + path + key + " is " + found->dump().substr(0, 60) +
                           ", not a " + kind_of<T>() +
                           "; the summary was changed or is of "
                           "another program");
        }
    }
    // A whole number in [least, most] (`otherwise` when absent): a figure no run can have
    // (peak_bytes -5, steps -3, 1e300) is refused naming the key, not stored.
    std::int64_t whole(const Json& object, const std::string& key, std::int64_t least,
                       std::int64_t most, std::int64_t otherwise, const std::string& path) const {
        const auto found = object.find(key);
        if (found == object.end() || found->is_null()) {
            return otherwise;
        }
        const bool fits =
            found->is_number_unsigned() ? found->get<std::uint64_t>() <= std::uint64_t(most)
            : found->is_number_integer()
                ? found->get<std::int64_t>() >= least && found->get<std::int64_t>() <= most
                : false;
        if (!fits) {
            throw BadInput(m_source + ": " + path + key + " is " + found->dump().substr(0, 60) +
                           ", not a whole number from " + std::to_string(least) + " to " +
                           std::to_string(most) +
                           "; the summary was changed or is of another program");
        }
        return found->get<std::int64_t>();
    }
    std::int64_t bytes(const Json& object, const std::string& key, const std::string& path) const {
        return whole(object, key, 0, kMostDeviceBytes, 0, path);
    }
    std::optional<std::int64_t> optional_bytes(const Json& object, const std::string& key,
                                               const std::string& path) const {
        const auto found = object.find(key);
        if (found == object.end() || found->is_null()) {
            return std::nullopt;
        }
        return bytes(object, key, path);
    }
    [[noreturn]] void refuse(const std::string& path, const Json& value, const char* wanted) const {
        throw BadInput(m_source + ": " + path + " is " + value.dump().substr(0, 60) + ", not " +
                       wanted + "; the file was changed or is of another program");
    }
    template <typename T>
    std::optional<T> optional(const Json& object, const std::string& key,
                              const std::string& path) const {
        const auto found = object.find(key);
        if (found == object.end() || found->is_null()) {
            return std::nullopt;
        }
        return get<T>(object, key, T{}, path);
    }
    template <typename T>
    T get(const std::string& key, T otherwise) const {
        return get<T>(m_document, key, otherwise, "");
    }
    const Json& at(const std::string& key) const {
        static const Json kNull;
        const auto found = m_document.find(key);
        return found == m_document.end() ? kNull : *found;
    }

private:
    template <typename T>
    static const char* kind_of() {
        if constexpr (std::is_same_v<T, std::string>) {
            return "text";
        } else if constexpr (std::is_same_v<T, bool>) {
            return "true or false";
        } else {
            return "number";
        }
    }
    const Json& m_document;
    std::string m_source;
};

std::vector<ModuleMemory> modules_of(const SummaryReader& read, const Json& list,
                                     const std::string& path) {
    std::vector<ModuleMemory> modules;
    for (std::size_t i = 0; list.is_array() && i < list.size(); ++i) {
        const Json& item = list[i];
        const std::string at = path + "[" + std::to_string(i) + "].";
        ModuleMemory& module = modules.emplace_back();
        module.module = read.get<std::string>(item, "module", "", at);
        module.parameters = read.bytes(item, "parameters", at);
        module.gradients = read.bytes(item, "gradients", at);
        module.optimizer_state = read.bytes(item, "optimizer_state", at);
        module.activations = read.optional<std::int64_t>(
            item, module.is_training_step() ? "temporaries" : "activations", at);
    }
    return modules;
}

RunRecord summary_of(const Json& document, const std::string& source) {
    if (!document.is_object()) {
        throw BadInput(source + ": not a run's summary (a JSON object with run_id, status, ...)");
    }
    const SummaryReader read(document, source);
    RunRecord run;
    run.name = read.get<std::string>("name", "");
    const std::string status = read.get<std::string>("status", "");
    const std::optional<RunStatus> parsed = parse_run_status(status);
    if (!parsed) {
        throw BadInput(source + ": status \"" + status.substr(0, 40) +
                       "\" is none of running, completed, oom, failed, cancelled, interrupted");
    }
    RunOutcome& outcome = run.outcome;
    outcome.status = *parsed;
    outcome.steps = read.whole(document, "steps", 0, kMostSteps, 0, "");
    outcome.final_train_loss = read.optional<double>(document, "final_train_loss", "");
    outcome.val_accuracy = read.optional<double>(document, "val_accuracy", "");
    outcome.peak_bytes = read.bytes(document, "peak_bytes", "");
    outcome.wall_seconds = read.get<double>("wall_seconds", 0);
    if (!(outcome.wall_seconds >= 0 && outcome.wall_seconds < 1e10)) {  // NaN fails too
        throw BadInput(source + ": wall_seconds is " + read.at("wall_seconds").dump() +
                       ", not a time a run took; the summary was changed or is of another "
                       "program");
    }
    outcome.batch_size = int(read.whole(document, "batch_size", 0, kMostBatch, 0, ""));
    outcome.accumulation = int(read.whole(document, "accumulation", 0, kMostBatch, 0, ""));
    outcome.error = read.get<std::string>("error", "");
    for (std::size_t i = 0; i < kBreakdownKeys.size(); ++i) {
        breakdown_field(outcome.breakdown, i) =
            read.bytes(read.at("breakdown"), std::string(kBreakdownKeys[i]), "breakdown.");
    }
    outcome.by_module = modules_of(read, read.at("by_module"), "by_module");
    const Json& staircase = read.at("staircase");
    for (std::size_t i = 0; staircase.is_array() && i < staircase.size(); ++i) {
        const std::string at = "staircase[" + std::to_string(i) + "].";
        outcome.staircase.push_back(
            {read.get<std::string>(staircase[i], "stage", "", at),
             read.bytes(staircase[i], "allocated_bytes", at),
             read.optional<std::int64_t>(staircase[i], "device_used_bytes", at)});
    }
    if (const Json& f = read.at("fragmentation"); f.is_object()) {
        Fragmentation& fragmentation = outcome.fragmentation.emplace();
        fragmentation.requested_bytes = read.bytes(f, "requested_bytes", "fragmentation.");
        fragmentation.reserved_free_bytes = read.bytes(f, "reserved_free_bytes", "fragmentation.");
        fragmentation.largest_free_block = read.bytes(f, "largest_free_block", "fragmentation.");
        fragmentation.free_blocks = read.bytes(f, "free_blocks", "fragmentation.");
        fragmentation.unreserved_free_bytes =
            read.bytes(f, "unreserved_free_bytes", "fragmentation.");
    }
    run.device = read.get<std::string>("device", "");
    run.created_at = read.get<std::string>("created_at", "");
    run.finished_at = read.get<std::string>("finished_at", "");
    run.engine_version = read.get<std::string>("engine_version", "");
    run.torch_version = read.get<std::string>("torch_version", "");
    run.tags = read.get<std::string>("tags", "");
    run.world_size = int(read.whole(document, "world_size", 1, kMostProcesses, 1, ""));
    if (const Json& prediction = read.at("prediction"); prediction.is_object()) {
        run.prediction = parse_prediction_json(prediction.dump());
    }
    if (const Json& fixes = read.at("fixes"); fixes.is_array() && !fixes.empty()) {
        run.fixes_json = fixes.dump();
    }
    if (const Json& tags = read.at("tracker_tags"); tags.is_object()) {
        run.tracker_tags = parse_tracker_tags(tags.dump());
    }
    return run;
}

MetricRow metric_row(const SummaryReader& read, const Json& item, const std::string& at) {
    if (!item.is_object()) {
        read.refuse(at.substr(0, at.size() - 1), item, "an object of a step's figures");
    }
    MetricRow row;
    row.rank = int(read.whole(item, "rank", 0, kMostProcesses - 1, 0, at));
    row.step = read.whole(item, "step", 0, kMostSteps, 0, at);
    row.phase = read.get<std::string>(item, "phase", "", at);
    row.wall_ms = read.get<double>(item, "wall_ms", 0, at);
    if (!(row.wall_ms >= 0 && row.wall_ms < 1e13)) {
        read.refuse(at + "wall_ms", item.at("wall_ms"), "a time since the run began");
    }
    row.loss = read.optional<double>(item, "loss", at);
    row.accuracy = read.optional<double>(item, "accuracy", at);
    row.allocated_bytes = read.optional_bytes(item, "allocated_bytes", at);
    row.reserved_bytes = read.optional_bytes(item, "reserved_bytes", at);
    row.peak_bytes = read.optional_bytes(item, "peak_bytes", at);
    row.device_used_bytes = read.optional_bytes(item, "device_used_bytes", at);
    row.device_total_bytes = read.optional_bytes(item, "device_total_bytes", at);
    row.alloc_retries = read.optional_bytes(item, "alloc_retries", at);
    row.oom_count = read.optional_bytes(item, "oom_count", at);
    row.samples_per_s = read.optional<double>(item, "samples_per_s", at);
    return row;
}

EventRow event_row(const SummaryReader& read, const Json& item, const std::string& at) {
    if (!item.is_object()) {
        read.refuse(at.substr(0, at.size() - 1), item, "an object with step, kind and message");
    }
    return {read.whole(item, "step", 0, kMostSteps, 0, at),
            read.get<std::string>(item, "kind", "", at),
            read.get<std::string>(item, "message", "", at)};
}

// The list under `key` (none when absent), each item read by `read_item`.
template <typename Row, typename ReadItem>
std::vector<Row> rows_of(const SummaryReader& read, const std::string& key, ReadItem read_item) {
    const Json& list = read.at(key);
    if (!list.is_null() && !list.is_array()) {
        read.refuse(key, list, "a list");
    }
    std::vector<Row> rows;
    rows.reserve(list.size());
    for (std::size_t i = 0; i < list.size(); ++i) {
        rows.push_back(read_item(read, list[i], key + "[" + std::to_string(i) + "]."));
    }
    return rows;
}

}  // namespace

RunRecord run_from_summary_json(const std::string& text, const std::string& source) {
    return summary_of(parse_json_limited<Json>(text, source), source);
}

RunExport run_from_export_json(const std::string& text, const std::string& source) {
    const Json document = parse_json_limited<Json>(text, source);
    RunExport whole;
    whole.run = summary_of(document, source);
    const SummaryReader read(document, source);
    whole.run.notes = read.get<std::string>("notes", "");
    if (const Json& config = read.at("config"); config.is_object()) {
        whole.run.config_json = config.dump();
    }
    whole.metrics = rows_of<MetricRow>(read, "metrics", metric_row);
    whole.events = rows_of<EventRow>(read, "events", event_row);
    return whole;
}

}  // namespace oomlab
