#include "data_parallel_runs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <set>

#include "test_support.h"

namespace oomlab {

std::vector<std::string> short_run(const std::string& db, std::vector<std::string> settings) {
    std::vector<std::string> arguments{"run",
                                       "--nproc",
                                       "2",
                                       "--db",
                                       db,
                                       "--set",
                                       "train.max_steps=" + std::to_string(kShortRunSteps),
                                       "--set",
                                       "distributed.timeout_s=20"};
    for (const std::string& setting : settings) {
        arguments.push_back("--set");
        arguments.push_back(setting);
    }
    return arguments;
}

std::map<std::string, std::string> parameter_hashes(const RunStore& store, std::int64_t run) {
    const std::regex identical(
        "parameters identical on all 2 processes \\(FNV-1a of their "
        "bytes: ([0-9a-f]{16})\\)");
    std::map<std::string, std::string> hash_by_writer;
    for (const EventRow& event : store.events(run)) {
        std::smatch match;
        if (std::regex_search(event.message, match, identical)) {
            hash_by_writer[event.message.rfind("rank 1: ", 0) == 0 ? "rank 1" : "rank 0"] =
                match[1];
        }
    }
    return hash_by_writer;
}

CappedRun every_rank_ends_out_of_memory(const std::string& db, std::vector<std::string> settings,
                                        std::int64_t low, std::int64_t high) {
    settings.push_back("memory.cap_mb=" + std::to_string((low + high) / 2 >> 20));
    CappedRun capped{test::run_cli(short_run(db, settings)), {}};
    EXPECT_EQ(capped.ran.exit_code, 3) << capped.ran.err;
    // One line for the other rank's out-of-memory error, no line per rank's exit code: rank 0's
    // summary says the rest.
    EXPECT_EQ(std::count(capped.ran.err.begin(), capped.ran.err.end(), '\n'), 1) << capped.ran.err;
    EXPECT_EQ(capped.ran.err.rfind("error: rank 1: out of memory", 0), 0u) << capped.ran.err;
    const RunStore store = RunStore::open(db);
    capped.run = store.list_runs().front();
    EXPECT_EQ(capped.run.outcome.status, RunStatus::Oom) << capped.run.outcome.error;
    for (const auto& rank : test::show_run_json(db, capped.run.id)["ranks"]) {
        EXPECT_EQ(rank["status"], "oom") << "rank " << rank["rank"];
    }
    std::set<int> ranks_with_oom_row;
    for (const MetricRow& row : store.metrics(capped.run.id)) {
        if (row.phase == "oom") {
            ranks_with_oom_row.insert(row.rank);
        }
    }
    EXPECT_EQ(ranks_with_oom_row, (std::set<int>{0, 1}));
    return capped;
}

nlohmann::json one_run_of_two_ranks(const std::string& db) {
    const nlohmann::json run = test::show_run_json(db, 1);
    EXPECT_EQ(run.at("status"), "completed") << run.dump();
    EXPECT_EQ(run.at("world_size"), 2);
    EXPECT_EQ(run.at("ranks").size(), 2u) << run.dump();
    EXPECT_EQ(test::run_cli({"runs", "show", "2", "--db", db}).exit_code, 2) << "one run only";
    return run;
}

}  // namespace oomlab
