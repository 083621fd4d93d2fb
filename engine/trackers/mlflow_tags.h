// The tags by which OOM Lab finds its runs on an MLflow server again.
#pragma once

#include <cstddef>
#include <string>

namespace oomlab::trackers {

inline constexpr const char* kUidTag = "oomlab.run_uid";           // the run's identity
inline constexpr const char* kDigestTag = "oomlab.export_digest";  // sent last: the run is whole
inline constexpr const char* kUserTag = "mlflow.user";             // who ran it (MLflow's own tag)
// The artifact holding the whole run (its rows of every phase and its events), where one
// was uploaded: an import reads it instead of the run's series.
inline constexpr const char* kWholeRunTag = "oomlab.whole_run";
inline constexpr const char* kWholeRunFile = "run.json";
// Some 330 bytes a row: a run of more rows (a run.json past 64 MiB) is read from its series.
inline constexpr std::size_t kMostWholeRunRows = 200000;
inline constexpr std::size_t kMostWholeRunBytes = std::size_t(64) << 20;
// "true" where the run's out-of-memory found more free than it asked for, in pieces.
inline constexpr const char* kFragmentedTag = "oomlab.fragmented";

// A lesson run's tags (oomlab/lessons/lesson_prediction.h's lesson_tags): its lesson, its
// place in it, the student's prediction.
inline bool is_lesson_tag(const std::string& key) {
    return key.rfind("oomlab.lesson", 0) == 0 || key == "oomlab.prediction";
}

// Who runs this process, as MLflow's client names its user: LOGNAME, USER, LNAME or USERNAME,
// else the account's name; empty when none is known.
std::string login_name();

}  // namespace oomlab::trackers
