// Guided lessons: data files (resources/lessons/*.json), each a few runs that differ in one
// setting, a short explanation, and the effect it claims, checked against the measurements.
#pragma once

#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "oomlab/config/config_keys.h"
#include "oomlab/session/run_session.h"

namespace oomlab {

struct LessonRun {
    std::string label;
    Settings settings;  // on top of the lesson's base settings
};

// "`smaller` is at most `at_most` x `than` in `metric`", or "`label` ends as `status`".
struct LessonClaim {
    std::string metric;  // see lesson_metric(); empty for a status claim
    std::string smaller;
    std::string than;
    double at_most = 1.0;
    std::string label;  // status claims
    RunStatus status = RunStatus::Completed;
};

struct Lesson {
    std::string name;  // file name without .json: "mixed-precision"
    std::string title;
    std::string explanation;
    Settings base;
    std::vector<LessonRun> runs;
    std::vector<LessonClaim> claims;
};

// Every lesson of a folder, sorted by name. Throws BadInput naming the file (and key).
std::vector<Lesson> load_lessons(const std::string& folder);
Lesson parse_lesson(const std::string& json_text, const std::string& source);
const Lesson& find_lesson(const std::vector<Lesson>& lessons, const std::string& name);

// Where the installed lessons are: $OOMLAB_RESOURCE_DIR/lessons, <prefix>/share/oomlab/lessons
// beside the running program, or the source tree's resources/lessons.
std::string lessons_folder();

ExperimentConfig lesson_config(const Lesson& lesson, const LessonRun& run);

struct LessonRunResult {
    LessonRun run;
    RunRecord record;
    std::vector<MetricRow> metrics;
};

struct ClaimCheck {
    std::string description;  // "bf16: activations 0.55 x fp32 (claim: at most 0.75 x)"
    bool holds = false;
};

struct LessonResult {
    std::vector<LessonRunResult> runs;
    std::vector<ClaimCheck> checks;
    bool all_hold() const;
};

// Runs every run of the lesson into the store, then checks its claims.
LessonResult run_lesson(const Lesson& lesson, RunStore& store, RunListener& listener,
                        const std::atomic<bool>& cancel);

// peak_bytes, a breakdown category (activations, data, ...), mean_step_peak or
// mean_device_used (process RSS at step ends).
double lesson_metric(const std::string& metric, const RunRecord& record,
                     const std::vector<MetricRow>& metrics);

}  // namespace oomlab
