// The workers' side channels without processes: the rendezvous the environment describes (as
// torch.distributed's env:// reads it, torchrun's agent store included) and what a worker
// reports to the launcher that started it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include "oomlab/common/errors.h"
#include "oomlab/workers/rendezvous.h"
#include "oomlab/workers/worker_report.h"
#include "test_support.h"

namespace oomlab {
namespace {

using Variables = std::map<std::string, std::string>;

// Sets the data-parallel variables for one test and restores what was there after it.
class Environment {
public:
    explicit Environment(const Variables& values) {
        for (const char* name : {"WORLD_SIZE", "RANK", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT",
                                 "TORCHELASTIC_USE_AGENT_STORE", "TORCHELASTIC_RESTART_COUNT"}) {
            const char* old = std::getenv(name);
            m_saved[name] = old ? std::optional<std::string>(old) : std::nullopt;
            unsetenv(name);
        }
        for (const auto& [name, value] : values) {
            setenv(name.c_str(), value.c_str(), 1);
        }
    }
    ~Environment() {
        for (const auto& [name, value] : m_saved) {
            value ? setenv(name.c_str(), value->c_str(), 1) : unsetenv(name.c_str());
        }
    }

private:
    std::map<std::string, std::optional<std::string>> m_saved;
};

std::string refusal(const Variables& values) {
    const Environment environment(values);
    try {
        rendezvous_from_environment();
    } catch (const BadInput& error) {
        return error.what();
    }
    return {};
}

TEST(Rendezvous, WithoutAWorldOfTwoOrMoreTheRunIsPlain) {
    {
        const Environment none(Variables{});
        EXPECT_FALSE(rendezvous_from_environment());
    }
    const Environment one(Variables{{"WORLD_SIZE", "1"}});
    EXPECT_FALSE(rendezvous_from_environment());
}

TEST(Rendezvous, ReadsTheVariablesAsEnvDoes) {
    const Environment environment(Variables{{"WORLD_SIZE", "4"},
                                            {"RANK", "3"},
                                            {"MASTER_ADDR", "127.0.0.1"},
                                            {"MASTER_PORT", "29511"}});
    const std::optional<Rendezvous> rendezvous = rendezvous_from_environment();
    ASSERT_TRUE(rendezvous);
    EXPECT_EQ(rendezvous->world_size, 4);
    EXPECT_EQ(rendezvous->rank, 3);
    EXPECT_EQ(rendezvous->local_rank, 3) << "LOCAL_RANK defaults to RANK";
    EXPECT_EQ(rendezvous->master_port, 29511);
    EXPECT_FALSE(rendezvous->join_agent_store);
    EXPECT_EQ(rendezvous->restart_count, 0);
}

// torchrun's agent serves the store itself and says so; each restart of the group counts.
TEST(Rendezvous, UnderTorchrunTheAgentsStoreIsJoined) {
    const Environment environment(Variables{{"WORLD_SIZE", "2"},
                                            {"RANK", "0"},
                                            {"LOCAL_RANK", "1"},
                                            {"MASTER_ADDR", "localhost"},
                                            {"MASTER_PORT", "29512"},
                                            {"TORCHELASTIC_USE_AGENT_STORE", "True"},
                                            {"TORCHELASTIC_RESTART_COUNT", "2"}});
    const std::optional<Rendezvous> rendezvous = rendezvous_from_environment();
    ASSERT_TRUE(rendezvous);
    EXPECT_EQ(rendezvous->local_rank, 1);
    EXPECT_TRUE(rendezvous->join_agent_store);
    EXPECT_EQ(rendezvous->restart_count, 2);
}

TEST(Rendezvous, AMissingOrWrongVariableIsNamed) {
    const Variables good = {
        {"WORLD_SIZE", "2"}, {"RANK", "1"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "29513"}};
    for (const std::string name : {"RANK", "MASTER_ADDR", "MASTER_PORT"}) {
        auto values = good;
        values.erase(name);
        const std::string message = refusal(values);
        EXPECT_NE(message.find(name + " is not set"), std::string::npos) << message;
    }
    const std::pair<std::string, std::string> wrong[] = {
        {"RANK", "2"},          {"RANK", "one"},      {"MASTER_PORT", "70000"},
        {"WORLD_SIZE", "5000"}, {"LOCAL_RANK", "-1"}, {"MASTER_ADDR", "no-such-host.invalid"}};
    for (const auto& [name, value] : wrong) {
        auto values = good;
        values[name] = value;
        const std::string message = refusal(values);
        EXPECT_NE(message.find("environment variable " + name), std::string::npos)
            << name << "=" << value << ": " << message;
    }
}

TEST(WorkerReports, WhatAWorkerReportsTheLauncherReads) {
    test::TempDir dir;
    const WorkerReports reports(dir.path());
    EXPECT_FALSE(reports.run_id());
    setenv(kWorkerReportVariable, dir.path().c_str(), 1);
    setenv("RANK", "1", 1);
    report_run_id(42);
    report_bad_input(BadInput("train.lr=-1: must be positive", {"train.lr"}));
    unsetenv("RANK");
    unsetenv(kWorkerReportVariable);
    EXPECT_EQ(reports.run_id(), 42);
    const std::vector<BadInput> refusals = reports.bad_inputs(2);
    ASSERT_EQ(refusals.size(), 1u);
    EXPECT_STREQ(refusals[0].what(), "train.lr=-1: must be positive");
    EXPECT_EQ(refusals[0].keys(), std::vector<std::string>{"train.lr"});
}

// A search's trials as they come, then its answer; rank 0 alone speaks for the search.
TEST(WorkerReports, ASearchIsReportedTrialByTrialByRankZero) {
    test::TempDir dir;
    const WorkerReports reports(dir.path());
    EXPECT_FALSE(reports.batch_search());
    setenv(kWorkerReportVariable, dir.path().c_str(), 1);
    BatchSizeSearch search;
    search.trials.push_back({64, true, 3000, 3100});
    setenv("RANK", "1", 1);
    report_batch_search(search, false);
    EXPECT_FALSE(reports.batch_search()) << "rank 1 runs the same trials in silence";
    setenv("RANK", "0", 1);
    report_batch_search(search, false);
    const auto first = reports.batch_search();
    ASSERT_TRUE(first);
    EXPECT_FALSE(first->done);
    ASSERT_EQ(first->search.trials.size(), 1u);
    EXPECT_EQ(first->search.trials[0].peak_bytes, 3000);

    search.trials.push_back({80, false, 2900, 3900});
    search.batch_size = 64;
    search.predicted = 70;
    search.cap_bytes = 3500;
    report_batch_search(search, true);
    unsetenv("RANK");
    unsetenv(kWorkerReportVariable);
    const auto last = reports.batch_search();
    ASSERT_TRUE(last);
    EXPECT_TRUE(last->done);
    EXPECT_EQ(last->search.batch_size, 64);
    EXPECT_EQ(last->search.predicted, 70);
    EXPECT_EQ(last->search.cap_bytes, 3500);
    ASSERT_EQ(last->search.trials.size(), 2u);
    EXPECT_EQ(last->search.trials[1].batch_size, 80);
    EXPECT_FALSE(last->search.trials[1].fits);
    EXPECT_EQ(last->search.trials[1].predicted_bytes, 3900);
}

TEST(WorkerReports, AReportNeverReplacesAFileThatIsNotOne) {
    test::TempDir dir;
    const std::string precious = dir.file("run.json");
    test::write_file(precious, "{\"something\": \"else\"}");
    setenv(kWorkerReportVariable, dir.path().c_str(), 1);
    report_run_id(7);
    unsetenv(kWorkerReportVariable);
    EXPECT_EQ(test::read_text(precious), "{\"something\": \"else\"}");
    EXPECT_FALSE(WorkerReports(dir.path()).run_id());
}

}  // namespace
}  // namespace oomlab
