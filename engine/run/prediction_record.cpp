#include "oomlab/run/prediction_record.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

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

PredictionRecord prediction_record(const std::vector<RunRecord>& runs, std::size_t worst_count,
                                   const std::string& model) {
    PredictionRecord record;
    std::vector<CalibrationCase> cases;
    for (const RunRecord& run : runs) {
        if (run.outcome.status != RunStatus::Completed || !run.prediction ||
            run.prediction->peak_bytes <= 0) {
            continue;
        }
        const std::string kind = model_of(run);
        if (!model.empty() && kind != model) {
            continue;
        }
        const PredictionCheck check = check_prediction(*run.prediction, run.outcome);
        if (!check.not_comparable.empty() || check.by_category.empty()) {
            continue;
        }
        const PredictionRow& peak = check.by_category.front();
        CalibrationCase one{run.id, run.name, kind, peak.predicted, peak.measured, cause_of(check)};
        ++record.runs;
        if (one.under()) {
            ++record.under;
            record.worst_under = std::max(record.worst_under, one.off());
        }
        record.outside_tolerance += peak.disagrees;
        cases.push_back(std::move(one));
    }
    std::stable_sort(cases.begin(), cases.end(), [](const auto& a, const auto& b) {
        return std::fabs(a.off()) > std::fabs(b.off());
    });
    cases.resize(std::min(cases.size(), worst_count));
    record.worst = std::move(cases);
    return record;
}

std::string describe(const PredictionRecord& record) {
    if (record.runs == 0) {
        return "no completed run here was held to its prediction yet";
    }
    std::string text = "in " + std::to_string(record.runs) + " run" +
                       (record.runs == 1 ? "" : "s") + " here, under the measured peak in " +
                       std::to_string(record.under);
    if (record.under > 0) {
        char worst[32];
        std::snprintf(worst, sizeof worst, "%.1f%%", 100 * record.worst_under);
        text += std::string(", by at most ") + worst;
    }
    return text;
}

}  // namespace oomlab
