// How the other ranks of a data-parallel run join the run rank 0 created: by its identity in
// their own database, never by its number alone, and only with the settings rank 0 trains.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "oomlab/config/experiment_config.h"
#include "oomlab/run/run_record.h"
#include "oomlab/session/experiment.h"
#include "oomlab/store/run_store.h"

namespace oomlab::session {

// Whether `store` holds the run `ticket` names: the run of that identity, under that number.
bool holds_run(const RunStore& store, const RunTicket& ticket);

// The keys whose values differ between this rank's config and rank 0's, as "key (rank 0: a,
// here: b)". Keys that name a place on a host (the data, the vectors, the snapshot, the
// device) may differ: hosts mount files in different places.
std::vector<std::string> settings_that_differ(const ExperimentConfig& mine,
                                              const ExperimentConfig& rank0);

// Why this rank cannot join the run `ticket` names with `config`, or nothing.
std::optional<std::string> refusal_to_join(const RunTicket& ticket, const ExperimentConfig& config);

// How a rank that records into another database than rank 0's ended, told to rank 0, which
// records it: "completed 120 52428800" (status, steps, peak bytes), then a line per module
// of its memory at the peak. Empty from a rank whose rows are in rank 0's database already.
std::string rank_report(const RunOutcome& outcome);
std::optional<RunOutcome> parse_rank_report(const std::string& report);

}  // namespace oomlab::session
