// A run's summary object (run_summary_json) read back: what a tracker keeps of a run that
// another machine trained.
#include <nlohmann/json.hpp>

#include "oomlab/common/errors.h"
#include "oomlab/common/json_parse.h"
#include "oomlab/run/prediction_check.h"
#include "oomlab/run/run_json.h"

namespace oomlab {
namespace {

using Json = nlohmann::ordered_json;

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
        module.parameters = read.get<std::int64_t>(item, "parameters", 0, at);
        module.gradients = read.get<std::int64_t>(item, "gradients", 0, at);
        module.optimizer_state = read.get<std::int64_t>(item, "optimizer_state", 0, at);
        module.activations = read.optional<std::int64_t>(
            item, module.is_training_step() ? "temporaries" : "activations", at);
    }
    return modules;
}

}  // namespace

RunRecord run_from_summary_json(const std::string& text, const std::string& source) {
    const Json document = parse_json_limited<Json>(text, source);
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
    outcome.steps = read.get<std::int64_t>("steps", 0);
    outcome.final_train_loss = read.optional<double>(document, "final_train_loss", "");
    outcome.val_accuracy = read.optional<double>(document, "val_accuracy", "");
    outcome.peak_bytes = read.get<std::int64_t>("peak_bytes", 0);
    outcome.wall_seconds = read.get<double>("wall_seconds", 0);
    outcome.batch_size = read.get<int>("batch_size", 0);
    outcome.accumulation = read.get<int>("accumulation", 0);
    outcome.error = read.get<std::string>("error", "");
    for (std::size_t i = 0; i < kBreakdownKeys.size(); ++i) {
        breakdown_field(outcome.breakdown, i) = read.get<std::int64_t>(
            read.at("breakdown"), std::string(kBreakdownKeys[i]), 0, "breakdown.");
    }
    outcome.by_module = modules_of(read, read.at("by_module"), "by_module");
    const Json& staircase = read.at("staircase");
    for (std::size_t i = 0; staircase.is_array() && i < staircase.size(); ++i) {
        const std::string at = "staircase[" + std::to_string(i) + "].";
        outcome.staircase.push_back(
            {read.get<std::string>(staircase[i], "stage", "", at),
             read.get<std::int64_t>(staircase[i], "allocated_bytes", 0, at),
             read.optional<std::int64_t>(staircase[i], "device_used_bytes", at)});
    }
    if (const Json& f = read.at("fragmentation"); f.is_object()) {
        Fragmentation& fragmentation = outcome.fragmentation.emplace();
        fragmentation.requested_bytes =
            read.get<std::int64_t>(f, "requested_bytes", 0, "fragmentation.");
        fragmentation.reserved_free_bytes =
            read.get<std::int64_t>(f, "reserved_free_bytes", 0, "fragmentation.");
        fragmentation.largest_free_block =
            read.get<std::int64_t>(f, "largest_free_block", 0, "fragmentation.");
        fragmentation.free_blocks = read.get<std::int64_t>(f, "free_blocks", 0, "fragmentation.");
        fragmentation.unreserved_free_bytes =
            read.get<std::int64_t>(f, "unreserved_free_bytes", 0, "fragmentation.");
    }
    run.device = read.get<std::string>("device", "");
    run.created_at = read.get<std::string>("created_at", "");
    run.finished_at = read.get<std::string>("finished_at", "");
    run.engine_version = read.get<std::string>("engine_version", "");
    run.torch_version = read.get<std::string>("torch_version", "");
    run.tags = read.get<std::string>("tags", "");
    run.world_size = read.get<int>("world_size", 1);
    if (const Json& prediction = read.at("prediction"); prediction.is_object()) {
        run.prediction = parse_prediction_json(prediction.dump());
    }
    if (const Json& fixes = read.at("fixes"); fixes.is_array() && !fixes.empty()) {
        run.fixes_json = fixes.dump();
    }
    return run;
}

}  // namespace oomlab
