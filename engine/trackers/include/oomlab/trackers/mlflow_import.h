// Runs that OOM Lab sent to an MLflow tracking server (from any machine: a class's
// students), read back into a run store, so that a lecturer sees everyone's runs together.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "oomlab/store/run_store.h"
#include "oomlab/trackers/request_control.h"

namespace oomlab::trackers {

struct MlflowSource {
    std::string tracking_uri;            // http://host:port
    std::string experiment = "OOM Lab";  // as the students' runs were sent
    RequestControl control;              // notes while a busy server is asked again; a stop
    TrackerFields named;
};

struct MlflowImport {
    std::size_t on_server = 0;          // runs OOM Lab sent there, whole
    std::vector<std::int64_t> added;    // their ids in the store, for those imported now
    std::vector<std::int64_t> present;  // the ids of all of them the store holds now
    std::size_t already_here = 0;       // held by the store already (by uid)
    std::size_t being_sent = 0;         // not yet whole on the server: the next import takes them
    std::size_t not_from_oomlab = 0;    // runs of other programs in the experiment
    std::vector<std::string> notes;     // what the server does not have, once each
    std::vector<std::string> without_summary;  // MLflow's ids of the runs it served no summary of
};

// The note for runs whose summary.json the server does not serve, with their count (one note,
// however many: a class of 30 made 30).
std::string without_summary_note(const std::vector<std::string>& runs);

// The note for the settings (KEY=VALUE) this version does not know, which keep their defaults:
// one, with their count and the first five (a run of 100,000 parameters made 100,000 notes).
std::string unknown_settings_note(const std::set<std::string>& settings);

// Reads every run OOM Lab sent to `source` that `store` does not hold (by the run's uid, so
// importing twice adds nothing) and adds each whole: the settings (its parameters), every
// series it was sent by step (loss, memory, speed, validation), and from its summary.json
// artifact the outcome, breakdown, by-module memory, staircase and prediction. The run is
// named after its student ("alice: batch 64"), the tag mlflow.user its machine set. What the
// server lacks (events, the rows of each phase, a summary it does not serve) is said in
// `notes`, never guessed. The server's answer is read a page (1,000 runs) at a time. Throws
// Error naming the server when it is down or is not MLflow, BadInput when the experiment is
// not there.
MlflowImport import_from_mlflow(RunStore& store, const MlflowSource& source);

// "imported 28 runs from MLflow http://...; 2 already here; ..." and the notes.
std::string describe(const MlflowSource& source, const MlflowImport& imported);

}  // namespace oomlab::trackers
