// A class's runs as they train, for the lecturer's live view: every run OOM Lab sends to the
// class's MLflow experiment, whole or still being sent, with its student, its state and its
// loss and memory by step. The series come a hundred runs to a request (MLflow's bulk history
// call), each run's as a sample of at most a few hundred steps: what a plot needs, not what an
// import stores.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "oomlab/run/run_record.h"
#include "oomlab/trackers/mlflow_import.h"

namespace oomlab::trackers {

struct StepValue {
    std::int64_t step = 0;
    double value = 0;
};
using StepSeries = std::vector<StepValue>;  // by step, rising

struct ClassRun {
    std::string uid;      // oomlab.run_uid: the same run in a store, once imported
    std::string student;  // mlflow.user ("" where none was sent)
    std::string name;     // the run's name
    // Running until its end is sent; then as it ended (completed, out of memory, ...).
    RunStatus status = RunStatus::Running;
    bool whole = false;  // sent to its end: an import takes it
    StepSeries loss;     // train/loss
    StepSeries memory;   // memory/reserved_MiB: what the allocator holds, what runs out
    // A lesson's run: the tags that say which lesson, which of its runs, and what the student
    // predicted (oomlab.lesson, oomlab.lesson_run, oomlab.prediction); empty otherwise.
    std::map<std::string, std::string> lesson_tags;
    std::int64_t peak_bytes = 0;  // its peak (peak/total_MiB), once whole
    bool fragmented = false;      // its out-of-memory: more free than asked for, in pieces
    // When the latest of these values was measured (ms since 1970, by the student's clock; 0
    // without a value): how far behind its training the class view is.
    std::int64_t last_ms = 0;
};

struct ClassProgress {
    std::vector<ClassRun> runs;  // oldest first
    std::size_t not_from_oomlab = 0;
    std::vector<std::string> notes;  // what the server lacks, once each
};

// Each run's most points: a projector's plot is about a thousand pixels wide.
inline constexpr std::size_t kClassPointsPerRun = 500;

// Reads the class at `source`: a search of its runs, then one bulk request per series and
// hundred runs (one run at a time where the server has no bulk call, said in a note). Throws
// as import_from_mlflow does: Error naming a server that is down or not MLflow, BadInput where
// the experiment is not there.
ClassProgress read_class_progress(const MlflowSource& source,
                                  std::size_t points_per_run = kClassPointsPerRun);

// A run the server still holds as running whose latest value is older than this: its process
// may have been stopped without sending its end (killed, the laptop closed), or its student
// holds it (Step).
inline constexpr std::int64_t kSilentMs = 60000;

// A run's state as the class view says it: "running", "completed", "out of memory", or
// "running, no step for 3 min" past kSilentMs at `now_ms` (ms since 1970).
std::string class_state(const ClassRun& run, std::int64_t now_ms);

// "30 runs from 28 students: 12 running, 15 completed, 1 out of memory, 2 silent" (the states
// there are; silent: running past kSilentMs without a step).
std::string class_counts(const ClassProgress& progress, std::int64_t now_ms);

// The class's median of `series` at `points` steps spread evenly from 0 to the furthest step any
// reached: at each step, the median over the runs that reached it of each one's last value at
// or before it (a run that stopped, or has not got there, is left out). Empty without a value.
StepSeries class_median(const std::vector<const StepSeries*>& series, std::size_t points = 200);

}  // namespace oomlab::trackers
