// Running a lesson and checking what it claims against what was measured.
#include <cmath>
#include <cstdio>

#include "oomlab/lessons/lesson.h"

namespace oomlab {
namespace {

const LessonRunResult* result_for(const LessonResult& result, const std::string& label) {
    for (const auto& run : result.runs) {
        if (run.run.label == label) {
            return &run;
        }
    }
    return nullptr;
}

ClaimCheck check(const LessonClaim& claim, const LessonResult& result) {
    char text[256];
    if (claim.metric.empty()) {
        const LessonRunResult* run = result_for(result, claim.label);
        const RunStatus status = run ? run->record.outcome.status : RunStatus::Failed;
        std::snprintf(text, sizeof text, "%s ends %s (claim: %s)", claim.label.c_str(),
                      std::string(run_status_name(status)).c_str(),
                      std::string(run_status_name(claim.status)).c_str());
        return {text, run && status == claim.status};
    }
    const LessonRunResult* smaller = result_for(result, claim.smaller);
    const LessonRunResult* than = result_for(result, claim.than);
    if (!smaller || !than) {
        return {"claim names a run the lesson does not have: " + claim.smaller + ", " + claim.than,
                false};
    }
    const double a = lesson_metric(claim.metric, smaller->record, smaller->metrics);
    const double b = lesson_metric(claim.metric, than->record, than->metrics);
    const double ratio = b > 0 ? a / b : INFINITY;
    std::snprintf(text, sizeof text, "%s: %s is %.2f x %s (claim: at most %.2f x)",
                  claim.metric.c_str(), claim.smaller.c_str(), ratio, claim.than.c_str(),
                  claim.at_most);
    return {text, ratio <= claim.at_most};
}

}  // namespace

bool LessonResult::all_hold() const {
    for (const auto& check : checks) {
        if (!check.holds) {
            return false;
        }
    }
    return true;
}

double lesson_metric(const std::string& metric, const RunRecord& record,
                     const std::vector<MetricRow>& metrics) {
    if (metric == "peak_bytes") {
        return double(record.outcome.peak_bytes);
    }
    for (std::size_t i = 0; i < kBreakdownKeys.size(); ++i) {
        if (kBreakdownKeys[i] == metric) {
            return double(breakdown_field(record.outcome.breakdown, i));
        }
    }
    double sum = 0;
    int count = 0;
    for (const auto& row : metrics) {
        if (row.phase != phase::kStep) {
            continue;
        }
        if (metric == "mean_step_peak" && row.peak_bytes) {
            sum += double(*row.peak_bytes);
            ++count;
        } else if (metric == "mean_device_used" && row.device_used_bytes) {
            sum += double(*row.device_used_bytes);
            ++count;
        }
    }
    return count ? sum / count : NAN;
}

LessonResult run_lesson(const Lesson& lesson, RunStore& store, RunListener& listener,
                        const std::atomic<bool>& cancel) {
    LessonResult result;
    for (const auto& run : lesson.runs) {
        const RunResult recorded = run_and_record(
            lesson_config(lesson, run), lesson.name + ": " + run.label, store, listener, cancel);
        result.runs.push_back(
            {run, *store.find_run(recorded.run_id), store.metrics(recorded.run_id)});
        if (recorded.outcome.status == RunStatus::Cancelled) {
            return result;
        }
    }
    for (const auto& claim : lesson.claims) {
        result.checks.push_back(check(claim, result));
    }
    return result;
}

}  // namespace oomlab
