// Joining a data-parallel run: by identity, with rank 0's settings; how a rank that records
// elsewhere tells rank 0 how it ended.
#include "session/run_join.h"

#include <gtest/gtest.h>

#include "oomlab/common/errors.h"
#include "oomlab/config/config_io.h"
#include "oomlab/config/config_keys.h"
#include "test_support.h"

namespace oomlab::session {
namespace {

TEST(RunJoin, ARunIsHeldByIdentityNotByNumber) {
    test::TempDir dir;
    RunStore mine = RunStore::open(dir.file("mine.sqlite"));
    RunStore other = RunStore::open(dir.file("other.sqlite"));
    const NewRun run{"run", config_to_json(ExperimentConfig{}), "cpu", "1", "1", 2};
    const std::int64_t id = mine.create_run(run);
    ASSERT_EQ(other.create_run(run), id);  // the same number in another database
    const RunTicket ticket{id, mine.run_uid(id), "{}"};
    EXPECT_EQ(ticket.uid.size(), 32u);
    EXPECT_NE(ticket.uid, other.run_uid(id));
    EXPECT_TRUE(holds_run(mine, ticket));
    EXPECT_FALSE(holds_run(other, ticket));
    EXPECT_FALSE(holds_run(mine, RunTicket{id + 1, ticket.uid, "{}"}));
    EXPECT_FALSE(holds_run(mine, RunTicket{id, "", "{}"}));
}

// Rank 0's ticket as the others read it from the store: what it wrote comes back whole (a
// config of several lines included); anything else is an Error quoting it, never a crash.
TEST(RunJoin, ATicketReadsBackAndAValueThatIsNoneIsRefused) {
    const RunTicket ticket{42, "3f2a9c0d41e5b6a7980c1d2e3f405162", "{\n  \"train\": {}\n}"};
    const RunTicket read = parse_run_ticket(run_ticket_text(ticket));
    EXPECT_EQ(read.run_id, 42);
    EXPECT_EQ(read.uid, ticket.uid);
    EXPECT_EQ(read.config_json, ticket.config_json);
    for (const std::string text : {"", "42", "42\nuid", "x\nuid\n{}", "-1\nuid\n{}",
                                   "99999999999999999999\nuid\n{}", "\xff\xff\xff\xff\n\n"}) {
        EXPECT_THROW(parse_run_ticket(text), Error) << text;
    }
}

TEST(RunJoin, SettingsThatDifferAreNamedExceptWhereFilesAre) {
    ExperimentConfig rank0;
    ExperimentConfig mine = rank0;
    EXPECT_TRUE(settings_that_differ(mine, rank0).empty());
    set_config_value(mine, "dataset.path", "/elsewhere/data.csv");
    set_config_value(mine, "embeddings.path", "/elsewhere/glove.txt");
    set_config_value(mine, "device", "cpu");
    set_config_value(mine, "debug.memory_snapshot", "here.pickle");
    EXPECT_TRUE(settings_that_differ(mine, rank0).empty());
    set_config_value(mine, "train.batch_size", "64");
    set_config_value(mine, "distributed.shard", "optimizer");
    const std::vector<std::string> expected{"distributed.shard (rank 0: none, here: optimizer)",
                                            "train.batch_size (rank 0: 32, here: 64)"};
    std::vector<std::string> differ = settings_that_differ(mine, rank0);
    std::sort(differ.begin(), differ.end());
    EXPECT_EQ(differ, expected);
}

TEST(RunJoin, RefusesSettingsRank0DoesNotTrainAndUnreadableOnes) {
    ExperimentConfig rank0;
    const RunTicket ticket{1, "uid", config_to_json(rank0)};
    EXPECT_EQ(refusal_to_join(ticket, rank0), std::nullopt);
    ExperimentConfig mine = rank0;
    set_config_value(mine, "train.lr", "0.5");
    const std::optional<std::string> refusal = refusal_to_join(ticket, mine);
    ASSERT_TRUE(refusal);
    EXPECT_NE(refusal->find("train.lr (rank 0: 0.001, here: 0.5)"), std::string::npos) << *refusal;
    const std::optional<std::string> unreadable = refusal_to_join({1, "uid", "{not json"}, rank0);
    ASSERT_TRUE(unreadable);
    EXPECT_NE(unreadable->find("cannot read the settings rank 0 trains"), std::string::npos);
}

TEST(RunJoin, ARanksReportCarriesItsEndingAndItsModules) {
    RunOutcome outcome;
    outcome.status = RunStatus::Oom;
    outcome.steps = 17;
    outcome.peak_bytes = 123456789;
    outcome.by_module = {{"embeddings", 100, 200, 300, std::nullopt},
                         {"layer 0 (attention)", 1, 2, 3, 4}};
    const std::optional<RunOutcome> read = parse_rank_report(rank_report(outcome));
    ASSERT_TRUE(read);
    EXPECT_EQ(read->status, RunStatus::Oom);
    EXPECT_EQ(read->steps, 17);
    EXPECT_EQ(read->peak_bytes, 123456789);
    ASSERT_EQ(read->by_module.size(), 2u);
    EXPECT_EQ(read->by_module[0].module, "embeddings");
    EXPECT_EQ(read->by_module[0].optimizer_state, 300);
    EXPECT_EQ(read->by_module[0].activations, std::nullopt);
    EXPECT_EQ(read->by_module[1].module, "layer 0 (attention)");
    EXPECT_EQ(read->by_module[1].activations, 4);
    EXPECT_EQ(parse_rank_report(""), std::nullopt);  // a rank whose rows are in rank 0's database
    EXPECT_EQ(parse_rank_report("finished 1 2"), std::nullopt);
}

}  // namespace
}  // namespace oomlab::session
