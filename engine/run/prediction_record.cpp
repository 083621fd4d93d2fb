#include "oomlab/run/prediction_record.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include <nlohmann/json.hpp>

#include "oomlab/run/prediction_check.h"

namespace oomlab {
namespace {

std::string model_of(const RunRecord& run) {
    const auto config = nlohmann::json::parse(run.config_json, nullptr, false);
    if (config.is_object() && config.contains("model") && config["model"].is_object()) {
        return config["model"].value("kind", "");
    }
    return "";
}

// Why the run's peak was off its prediction: the peak's known cause, else the cause of the
// category that was off the most.
std::string cause_of(const PredictionCheck& check) {
    const PredictionRow* cause = nullptr;
    for (const PredictionRow& row : check.by_category) {
        if (row.why.empty()) {
            continue;
        }
        if (row.category == "peak") {
            return row.why;
        }
        const auto size = [](const PredictionRow* r) {
            return std::llabs(r->measured - r->predicted);
        };
        if (!cause || size(&row) > size(cause)) {
            cause = &row;
        }
    }
    return cause ? cause->category + ": " + cause->why : std::string();
}

}  // namespace

double CalibrationCase::off() const {
    return predicted > 0
               ? static_cast<double>(measured - predicted) / static_cast<double>(predicted)
               : 0.0;
}

namespace {

// The run's peak against its prediction, or nullopt when it is not held to one.
std::optional<CalibrationCase> held_case(const RunRecord& run) {
    if (run.outcome.status != RunStatus::Completed || !run.prediction ||
        run.prediction->peak_bytes <= 0) {
        return std::nullopt;
    }
    const PredictionCheck check = check_prediction(*run.prediction, run.outcome);
    if (!check.not_comparable.empty() || check.by_category.empty()) {
        return std::nullopt;
    }
    const PredictionRow& peak = check.by_category.front();
    return CalibrationCase{run.id,         run.name,      model_of(run),
                           peak.predicted, peak.measured, cause_of(check)};
}

void add(PredictionRecord& record, const CalibrationCase& one) {
    ++record.runs;
    if (one.under()) {
        ++record.under;
        record.worst_under = std::max(record.worst_under, one.off());
    }
    record.outside_tolerance += prediction_disagrees(one.predicted, one.measured);
    record.worst.push_back(one);
}

// Keeps the `worst_count` cases furthest off their prediction, largest first.
void keep_worst(PredictionRecord& record, std::size_t worst_count) {
    std::stable_sort(record.worst.begin(), record.worst.end(), [](const auto& a, const auto& b) {
        return std::fabs(a.off()) > std::fabs(b.off());
    });
    record.worst.resize(std::min(record.worst.size(), worst_count));
}

}  // namespace

PredictionRecord prediction_record(const std::vector<RunRecord>& runs, std::size_t worst_count,
                                   const std::string& model) {
    PredictionRecord record;
    for (const RunRecord& run : runs) {
        const std::optional<CalibrationCase> one = held_case(run);
        if (one && (model.empty() || one->model == model)) {
            add(record, *one);
        }
    }
    keep_worst(record, worst_count);
    return record;
}

PredictionRecords prediction_records(const std::vector<RunRecord>& runs, std::size_t worst_count) {
    PredictionRecords records;
    for (const RunRecord& run : runs) {
        if (const std::optional<CalibrationCase> one = held_case(run)) {
            add(records.all, *one);
            add(records.by_model[one->model], *one);
        }
    }
    keep_worst(records.all, worst_count);
    for (auto& [model, record] : records.by_model) {
        keep_worst(record, worst_count);
    }
    return records;
}

const PredictionRecord& PredictionRecords::of_model(const std::string& model) const {
    static const PredictionRecord kNone;
    const auto found = by_model.find(model);
    return found == by_model.end() ? kNone : found->second;
}

std::string describe(const PredictionRecord& record) {
    if (record.runs == 0) {
        return "no completed run here was held to its prediction yet";
    }
    std::string text = std::to_string(record.runs) + " run" + (record.runs == 1 ? "" : "s") +
                       " here checked against the estimate: ";
    if (record.under == 0) {
        return text + "none needed more than it said";
    }
    char worst[32];
    std::snprintf(worst, sizeof worst, "%.1f%%", 100 * record.worst_under);
    return text + std::to_string(record.under) + " needed more than it said, by at most " + worst;
}

}  // namespace oomlab
