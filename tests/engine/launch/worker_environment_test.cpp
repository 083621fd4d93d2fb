// The workers' side channels without processes: the rendezvous the environment describes (as
// torch.distributed's env:// reads it, torchrun's agent store included) and what a worker
// reports to the launcher that started it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include "oomlab/common/errors.h"
#include "oomlab/launch/rendezvous.h"
#include "oomlab/launch/worker_report.h"
#include "test_support.h"

namespace oomlab {
namespace {

using Variables = std::map<std::string, std::string>;

// Sets the data-parallel variables for one test and restores what was there after it.
class Environment {
public:
    explicit Environment(const Variables& values) {
        for (const char* name :
             {"WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
              "TORCHELASTIC_USE_AGENT_STORE", "TORCHELASTIC_RESTART_COUNT", "SLURM_STEP_ID",
              "SLURM_NTASKS", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID", "SLURM_JOB_ID",
              "SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST",
              "SLURM_RESTART_COUNT"}) {
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

TEST(Rendezvous, LocalWorldSizeBoundsTheLocalRank) {
    const Variables values = {{"WORLD_SIZE", "4"},          {"RANK", "3"},
                              {"LOCAL_RANK", "1"},          {"LOCAL_WORLD_SIZE", "2"},
                              {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "29514"}};
    {
        const Environment environment(values);
        EXPECT_EQ(rendezvous_from_environment()->local_rank, 1);
    }
    auto wrong = values;
    wrong["LOCAL_RANK"] = "2";
    EXPECT_NE(refusal(wrong).find("environment variable LOCAL_RANK"), std::string::npos)
        << refusal(wrong);
}

// What srun sets in each task of a step of two nodes, two tasks each (task 2: node 1's first).
Variables srun_task() {
    return {{"SLURM_JOB_ID", "1234"},
            {"SLURM_STEP_ID", "0"},
            {"SLURM_NTASKS", "4"},
            {"SLURM_PROCID", "2"},
            {"SLURM_LOCALID", "0"},
            {"SLURM_NODEID", "1"},
            {"SLURM_STEP_NODELIST", "localhost,ip6-localhost"}};
}

TEST(Rendezvous, InASlurmStepEachTaskIsARankMeetingOnTheFirstNode) {
    const Environment environment(srun_task());
    const std::optional<Rendezvous> rendezvous = rendezvous_from_environment();
    ASSERT_TRUE(rendezvous);
    EXPECT_EQ(rendezvous->world_size, 4);
    EXPECT_EQ(rendezvous->rank, 2);
    EXPECT_EQ(rendezvous->local_rank, 0) << "the device is the task's place on its node";
    EXPECT_EQ(rendezvous->master_addr, "localhost");
    EXPECT_EQ(rendezvous->master_port, kFirstSlurmPort + (1234 * 16 + 0) % kSlurmPorts);
    EXPECT_EQ(rendezvous->master_port, 19744);
    EXPECT_FALSE(rendezvous->join_agent_store);
}

TEST(Rendezvous, MasterVariablesAndTorchrunInsideAStepComeFirst) {
    {
        auto values = srun_task();
        values["MASTER_ADDR"] = "127.0.0.1";
        values["MASTER_PORT"] = "29600";
        const Environment environment(values);
        const std::optional<Rendezvous> rendezvous = rendezvous_from_environment();
        EXPECT_EQ(rendezvous->master_addr, "127.0.0.1");
        EXPECT_EQ(rendezvous->master_port, 29600);
        EXPECT_EQ(rendezvous->rank, 2);
    }
    // torchrun started by srun: its workers' own variables describe the group.
    auto values = srun_task();
    values.insert({{"WORLD_SIZE", "8"},
                   {"RANK", "5"},
                   {"MASTER_ADDR", "127.0.0.1"},
                   {"MASTER_PORT", "29601"}});
    const Environment environment(values);
    const std::optional<Rendezvous> rendezvous = rendezvous_from_environment();
    EXPECT_EQ(rendezvous->world_size, 8);
    EXPECT_EQ(rendezvous->rank, 5);
}

// sbatch sets SLURM_NTASKS in the batch script too, where only one process runs.
TEST(Rendezvous, ABatchScriptOrAStepOfOneTaskIsAPlainRun) {
    auto script = srun_task();
    script.erase("SLURM_STEP_ID");
    {
        const Environment environment(script);
        EXPECT_FALSE(rendezvous_from_environment());
    }
    auto one = srun_task();
    one["SLURM_NTASKS"] = "1";
    one["SLURM_PROCID"] = "0";
    const Environment environment(one);
    EXPECT_FALSE(rendezvous_from_environment());
}

TEST(Rendezvous, AWrongSlurmVariableIsNamed) {
    for (const std::string name : {"SLURM_PROCID", "SLURM_LOCALID", "SLURM_JOB_ID"}) {
        auto values = srun_task();
        values.erase(name);
        const std::string message = refusal(values);
        EXPECT_NE(message.find(name + " is not set"), std::string::npos) << message;
    }
    auto values = srun_task();
    values["SLURM_PROCID"] = "4";
    EXPECT_NE(refusal(values).find("environment variable SLURM_PROCID"), std::string::npos);
    // The node list is read as Slurm writes it: the message names its first host.
    values = srun_task();
    values["SLURM_STEP_NODELIST"] = "gpu-node[07-12,20],cpu3.invalid";
    const std::string message = refusal(values);
    EXPECT_NE(message.find("SLURM_STEP_NODELIST: cannot find the host \"gpu-node07\""),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("set MASTER_ADDR"), std::string::npos) << message;
}

TEST(Rendezvous, TheFirstHostOfASlurmNodeList) {
    EXPECT_EQ(first_slurm_host("node1"), "node1");
    EXPECT_EQ(first_slurm_host("node1,node2"), "node1");
    EXPECT_EQ(first_slurm_host("gpu[007-012,020]"), "gpu007");
    EXPECT_EQ(first_slurm_host("rack[3-4]-gpu[1-8],login1"), "rack3-gpu1");
    EXPECT_EQ(first_slurm_host("n[5,9]"), "n5");
    EXPECT_THROW(first_slurm_host("gpu[1-4"), BadInput);
    EXPECT_THROW(first_slurm_host(",node2"), BadInput);
    // Numbers with no host name, an empty or a lettered range: not a host to connect to.
    for (const char* odd : {"[1-3]", "node[]", "node[a-c]", "[007]x"}) {
        try {
            first_slurm_host(odd);
            ADD_FAILURE() << odd << " was read as " << first_slurm_host(odd);
        } catch (const BadInput& error) {
            EXPECT_NE(std::string(error.what()).find("goes after a host name"), std::string::npos)
                << error.what();
        }
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
