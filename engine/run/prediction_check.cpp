#include "oomlab/run/prediction_check.h"

#include <algorithm>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "module_kinds.h"

#include "oomlab/common/json_parse.h"
#include "oomlab/run/run_json.h"

namespace oomlab {
namespace {

using run::find_module;
using run::kModuleKinds;
using run::ModuleKind;

using Json = nlohmann::ordered_json;

constexpr const char* kNoBreakdown =
    "the run ended before it recorded its breakdown (its process was killed or lost): only its "
    "peak, the highest of its step rows, is known";

// Why a run's figures cannot be held to a prediction of whole steps, or empty.
std::string why_not_comparable(const RunOutcome& run) {
    switch (run.status) {
        case RunStatus::Oom:
            return "the run ran out of memory: it measured what it held when an allocation "
                   "failed, short of what a whole step needs";
        case RunStatus::Completed:
        case RunStatus::Running:
            return run.peak_bytes > 0 ? std::string() : "nothing was measured yet";
        default:
            if (run.steps == 0) {
                return "the run ended before its first whole step";
            }
            return run.has_breakdown() ? std::string() : kNoBreakdown;
    }
}

// The causes known to move a figure away from its prediction, in words.
std::string known_cause(const PredictionRow& row, const MemoryPrediction& predicted) {
    if (row.category == "allocator_cache" || row.category == "reserved") {
        return "the estimate replays each module's tensors through the allocator's model, not "
               "every temporary of every operation: the cache is left in other pieces";
    }
    if (row.measured >= row.predicted) {
        return {};
    }
    const std::string worst = std::to_string(predicted.worst_batch_length);
    if (row.category == "data") {
        return "the estimator counts every batch the loader may hold ahead, each padded like "
               "the longest example (" +
               worst + " tokens); at the peak it held fewer or shorter ones";
    }
    if (row.category == "gradients" && row.measured == 0 && !predicted.every_batch_worst) {
        return "the peak came where no gradient was alive: the batches differ in length, and the "
               "longest fell in forward or (accumulating) on a step's first micro-batch, not "
               "where the estimate places it";
    }
    if (row.category == "optimizer_state" && row.measured == 0) {
        return "the peak came before the optimizer's first update made its state: the first "
               "step needed more than any later one did with the state";
    }
    if ((row.category == "activations" || row.category == "peak") && !predicted.every_batch_worst) {
        return "a known cause: the estimator assumes the longest batch this run draws, padded "
               "to " +
               worst + " tokens, at the step that peaks; a peak at a shorter batch holds less";
    }
    return {};
}

bool measured_by_module(const RunOutcome& run) {
    return !run.by_module.empty() &&
           std::all_of(run.by_module.begin(), run.by_module.end(),
                       [](const ModuleMemory& m) { return m.activations.has_value(); });
}

}  // namespace

std::optional<double> PredictionRow::off() const {
    return predicted > 0 ? std::optional(double(measured - predicted) / double(predicted))
                         : std::nullopt;
}

int PredictionCheck::disagreements() const {
    int count = 0;
    for (const auto* rows : {&by_category, &by_module}) {
        count += static_cast<int>(std::count_if(
            rows->begin(), rows->end(), [](const PredictionRow& r) { return r.disagrees; }));
    }
    return count;
}

bool prediction_disagrees(std::int64_t predicted, std::int64_t measured) {
    const double allowed =
        std::max(kPredictionTolerance * double(predicted), double(kPredictionSlackBytes));
    return std::abs(double(measured - predicted)) > allowed;
}

PredictionCheck check_prediction(const MemoryPrediction& predicted, const RunOutcome& measured) {
    PredictionCheck check;
    check.not_comparable = why_not_comparable(measured);
    const auto add = [&](std::vector<PredictionRow>& rows, std::string category, std::string module,
                         std::int64_t expected, std::int64_t actual) {
        if (expected == 0 && actual == 0) {
            return;
        }
        PredictionRow& row = rows.emplace_back();
        row.category = std::move(category);
        row.module = std::move(module);
        row.predicted = expected;
        row.measured = actual;
        row.disagrees = check.not_comparable.empty() && prediction_disagrees(expected, actual);
        if (row.disagrees) {
            row.why = known_cause(row, predicted);
        }
    };
    // The prediction is one process's; a run of several keeps the first rank's breakdown,
    // whose peak may be below the highest rank's: compared with the peak it adds up to.
    add(check.by_category, "peak", "", predicted.peak_bytes,
        measured.has_breakdown() ? measured.breakdown.tensors() : measured.peak_bytes);
    if (!measured.has_breakdown() && measured.status != RunStatus::Running) {
        return check;  // no categories were measured: none are compared with zeros
    }
    // What the caching allocator reserved at the peak, where one caches (CUDA, or the model
    // on the CPU): the tensors and the cache beside them.
    if (predicted.breakdown.allocator_cache > 0) {
        add(check.by_category, "reserved", "",
            predicted.peak_bytes + predicted.breakdown.allocator_cache,
            measured.breakdown.tensors() + measured.breakdown.allocator_cache);
    }
    // Beside the peak (the allocator's cache, the device's other use) only where predicted:
    // the CPU has neither, and "other" there is the process's own memory.
    for (std::size_t i = 0; i < kBreakdownKeys.size(); ++i) {
        const std::int64_t expected = breakdown_field(predicted.breakdown, i);
        if (i < kBreakdownInPeak || expected > 0) {
            add(check.by_category, std::string(kBreakdownKeys[i]), "", expected,
                breakdown_field(measured.breakdown, i));
        }
    }
    if (!measured_by_module(measured)) {
        return check;  // older runs, or a device whose allocator does not tell modules apart
    }
    for (const ModuleMemory& module : predicted.by_module) {
        const ModuleMemory* actual = find_module(measured.by_module, module.module);
        for (const ModuleKind& kind : kModuleKinds) {
            add(check.by_module, kind.name, module.module, kind.bytes(module),
                actual ? kind.bytes(*actual) : 0);
        }
    }
    return check;
}

std::string prediction_json(const MemoryPrediction& prediction) {
    return prediction_value(prediction).dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::optional<MemoryPrediction> parse_prediction_json(const std::string& text) {
    try {
        const Json document = parse_json_limited<Json>(text, "prediction");
        MemoryPrediction prediction;
        prediction.peak_bytes = document.at("peak_bytes").get<std::int64_t>();
        prediction.worst_batch_length = document.value("worst_batch_length", 0);
        prediction.every_batch_worst = document.value("every_batch_worst", false);
        const Json& breakdown = document.at("breakdown");
        for (std::size_t i = 0; i < kBreakdownKeys.size(); ++i) {
            breakdown_field(prediction.breakdown, i) =
                breakdown.value(std::string(kBreakdownKeys[i]), std::int64_t{0});
        }
        for (const Json& module : document.at("by_module")) {
            ModuleMemory& row = prediction.by_module.emplace_back();
            row.module = module.at("module").get<std::string>();
            row.parameters = module.value("parameters", std::int64_t{0});
            row.gradients = module.value("gradients", std::int64_t{0});
            row.optimizer_state = module.value("optimizer_state", std::int64_t{0});
            // A step's bytes are "temporaries" (older predictions called them activations).
            row.activations = module.value("activations", std::int64_t{0}) +
                              module.value("temporaries", std::int64_t{0});
        }
        return prediction;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

}  // namespace oomlab
