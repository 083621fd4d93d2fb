// Runs of several processes through the real binary, shared by the data-parallel tests.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "oomlab/run/run_record.h"
#include "oomlab/store/run_store.h"

namespace oomlab {

// The optimizer steps of a short run: past the first update (each rank's optimizer state, its
// shard of it) and the evaluation at the end, where every peak these tests check falls, with
// enough updates for the ranks' parameters to part if their sums were wrong. Twelve cost twice
// the CPU (4.9 s -> 2.2 s for two ranks of a transformer with accumulation 3).
constexpr int kShortRunSteps = 4;

// `run --nproc 2` into `db` with `settings` (kShortRunSteps; a later train.max_steps in
// `settings` wins): a short run both ranks finish in seconds on two cores.
std::vector<std::string> short_run(const std::string& db, std::vector<std::string> settings);

// The hashes of both ranks' parameters, from their end-of-run notes ("rank 0", "rank 1").
std::map<std::string, std::string> parameter_hashes(const RunStore& store, std::int64_t run);

// `settings` again under a cap halfway between the ranks' peaks `low` and `high`, where one
// rank runs out of memory and the other would not: every rank still ends out of memory, with
// its own row saying so (checked here).
struct CappedRun {
    test::CliResult ran;
    RunRecord run;
};
CappedRun every_rank_ends_out_of_memory(const std::string& db, std::vector<std::string> settings,
                                        std::int64_t low, std::int64_t high);

// What an outside launcher's two ranks trained into `db`: one run and no second, completed, of
// world size 2, both ranks listed (checked here). Returns its `runs show --json`.
nlohmann::json one_run_of_two_ranks(const std::string& db);

}  // namespace oomlab
