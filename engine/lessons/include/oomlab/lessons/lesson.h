// Guided lessons: data files (resources/lessons/*.json), each a few runs that differ in one
// setting, a short explanation, and the effect it claims, checked against the measurements.
#pragma once

#include <array>
#include <atomic>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "oomlab/config/config_keys.h"
#include "oomlab/session/run_session.h"

namespace oomlab {

struct LessonRun {
    std::string label;
    Settings settings;  // on top of the lesson's base settings
};

// One of three claims:
// - ratio: "`smaller` is at most `at_most` x `than` in `metric`";
// - status: "`label` ends as `status`";
// - largest: "in `label`, `module` holds the most `metric`" (a kind of memory by module).
struct LessonClaim {
    enum class Kind { Ratio, Status, Largest };
    Kind kind = Kind::Ratio;
    std::string metric;  // see lesson_metric(); for Largest, a kind in kModuleMemoryKinds
    std::string smaller;
    std::string than;
    double at_most = 1.0;
    std::string label;  // status and largest claims
    RunStatus status = RunStatus::Completed;
    // Status claims of an out-of-memory: whether the allocator's free space at it was
    // fragmented (more free than asked for, in no block large enough).
    std::optional<bool> fragmented;
    // Status claims: the run trained at least this many steps before it ended so (a failure
    // that shows only once training is under way).
    std::optional<std::int64_t> after_steps;
    std::string module;  // largest claims
};

// What a claim says, before it is checked ("activations of block 1: checkpointed is at most
// 0.2 x plain").
std::string describe_claim(const LessonClaim& claim);

// What changes when the lesson runs on a CUDA device ("on_cuda" in its file): the device's
// libraries and kernels hold memory the CPU does not (cuBLAS's workspaces, the CUDA context),
// so a cap, or the figure a claim compares, may differ there. `why` says so to the reader.
struct LessonOnCuda {
    Settings settings;                               // on top of the base, under each run's own
    std::optional<std::vector<LessonClaim>> claims;  // in place of the lesson's, where given
    std::string why;
};

struct Lesson {
    std::string name;  // file name without .json: "mixed-precision"
    std::string title;
    std::string explanation;
    Settings base;
    int processes = 1;  // > 1: each run is data parallel, one local process per rank
    std::vector<LessonRun> runs;
    std::vector<LessonClaim> claims;
    std::optional<LessonOnCuda> on_cuda;
    // The form's settings hidden, or shown but locked, while the lesson is open: what is not
    // its topic out of the students' way, what it is about visible but fixed.
    std::vector<std::string> hide;
    std::vector<std::string> lock;
};

// A lesson file of a folder that does not read: its name (the file's, without .json) and why
// (the refusal, naming the file, the line and the key).
struct BrokenLesson {
    std::string name;
    std::string why;
};

// Every lesson of a folder that reads, sorted by name: one broken file leaves the others
// usable, and is added to `broken` where given. Throws BadInput when there is no such folder.
std::vector<Lesson> load_lessons(const std::string& folder,
                                 std::vector<BrokenLesson>* broken = nullptr);
Lesson parse_lesson(const std::string& json_text, const std::string& source);
// A lesson written as a file (the built-in ones are examples of the format); BadInput naming
// the file, the line and the key when it is not one.
Lesson load_lesson_file(const std::string& path);
// A lesson file's text drafted from saved runs (at least one): the settings they share as its
// base, each run's own as its runs (labelled by name), and claims of what they measured (a
// run's end where it did not complete; the smaller peak at most its share of the larger, with
// a tenth of slack). Its title and explanation are for the lecturer to write.
std::string lesson_from_runs(const std::vector<RunRecord>& runs);
// `name_or_file`: a built-in lesson's name, or a lesson file (a path ending in .json).
Lesson find_or_load_lesson(const std::string& name_or_file);
const Lesson& find_lesson(const std::vector<Lesson>& lessons, const std::string& name);

// Where the installed lessons are: $OOMLAB_RESOURCE_DIR/lessons, <prefix>/share/oomlab/lessons
// beside the running program, or the source tree's resources/lessons.
std::string lessons_folder();

// A run's config: the base, on CUDA the lesson's on_cuda settings, then the run's own.
ExperimentConfig lesson_config(const Lesson& lesson, const LessonRun& run, bool on_cuda = false);
// Where the lesson's runs train: their device, or with "auto" a CUDA device where there is one
// for each of its processes, else the CPU (`instead`, with a `note` saying why).
struct LessonDevice {
    bool cuda = false;
    std::string instead;  // the device the runs take in place of their own; empty: theirs
    std::string note;
};
LessonDevice lesson_device(const Lesson& lesson);
// The claims checked on that device.
const std::vector<LessonClaim>& lesson_claims(const Lesson& lesson, bool on_cuda);

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
    std::string device_note;  // on CUDA, the lesson's on_cuda.why; or why it ran elsewhere
    bool all_hold() const;
};

// Runs every run of the lesson into the store, then checks its claims.
LessonResult run_lesson(const Lesson& lesson, RunStore& store, RunListener& listener,
                        const std::atomic<bool>& cancel);

// The kinds of memory a module holds, as lesson metrics name them.
inline constexpr std::array<std::string_view, 4> kModuleMemoryKinds = {
    "parameters", "gradients", "optimizer_state", "activations"};

// peak_bytes, a breakdown category (activations, data, ...), mean_step_peak,
// mean_device_used (the device's used memory, on the CPU the process's RSS, at step ends),
// mean_reserved (what the allocator reserved at step ends), val_accuracy (the last validation
// pass's), or KIND@MODULE: one module's bytes of a
// kind at the peak ("activations@block 1"). NaN where the run did not measure it.
double lesson_metric(const std::string& metric, const RunRecord& record,
                     const std::vector<MetricRow>& metrics);
// Whether `metric` is one lesson_metric() knows (lesson files are checked on load).
bool is_lesson_metric(const std::string& metric);

}  // namespace oomlab
