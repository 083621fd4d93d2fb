// Commands about runs already saved: they read the database they are given and never make
// one, and a fix names a run that is there and did not complete.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include "cli_runner.h"

#include "oomlab/run/prediction_check.h"
#include "oomlab/store/run_store.h"
#include "test_support.h"

namespace oomlab {
namespace {

using test::run_cli;

class SavedRuns : public ::testing::Test {
protected:
    std::string db() const { return m_dir.file("runs.sqlite"); }
    std::string file(const std::string& name) const { return m_dir.file(name); }
    // A database holding one completed run (make_test_database.sh's one-run).
    void make_database() { test::copy_test_database("one-run", db()); }
    std::size_t run_count() const { return RunStore::open(db()).list_runs().size(); }
    test::TempDir m_dir;
};

// A command about saved runs never creates a database: a mistyped --db is named, and the
// folder holds no new file.
TEST_F(SavedRuns, ReadingAMistypedDatabaseCreatesNothing) {
    const std::string missing = file("runs.sqlte");
    using Args = std::vector<std::string>;
    for (const Args& command : {Args{"runs", "list"}, Args{"runs", "show", "1"},
                                Args{"runs", "export", "1"}, Args{"runs", "diff", "1", "2"},
                                Args{"runs", "tag", "1", "x"}, Args{"runs", "delete", "1"}}) {
        Args args = command;
        args.insert(args.end(), {"--db", missing});
        const auto refused = run_cli(args);
        EXPECT_EQ(refused.exit_code, 2) << command[1];
        EXPECT_NE(refused.err.find("there is no run database at " + missing), std::string::npos)
            << refused.err;
        EXPECT_TRUE(std::filesystem::is_empty(m_dir.path())) << command[1];
    }
}

// A fix names the run it is for: one that is not there is refused before any rank starts
// (rank 1 waited out the rendezvous), and so is one that completed (a fix of it was never
// listed).
TEST_F(SavedRuns, AFixIsForARunThereThatDidNotComplete) {
    make_database();
    const auto missing = run_cli({"run", "--nproc", "2", "--db", db(), "--fix-of", "999", "--set",
                                  "train.max_steps=2", "--set", "distributed.timeout_s=20"});
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_NE(missing.err.find("--fix-of: " + db() + " has no run 999"), std::string::npos)
        << missing.err;
    EXPECT_EQ(missing.err.find("rendezvous"), std::string::npos) << missing.err;
    const auto completed =
        run_cli({"run", "--db", db(), "--fix-of", "1", "--set", "train.max_steps=2"});
    EXPECT_EQ(completed.exit_code, 2);
    EXPECT_NE(completed.err.find("--fix-of: run 1 completed"), std::string::npos) << completed.err;
    EXPECT_EQ(run_count(), 1u);
}

// --try-fixes trains the fixes one after the other in its own process: refused, before
// anything trains, for a run of several processes and for one sent to a tracker; a run
// that completes has nothing to try and says nothing of it.
TEST_F(SavedRuns, FixesAreTriedOnlyInOneProcessAndOnlyAfterAnOom) {
    using Args = std::vector<std::string>;
    make_database();
    for (const Args& where : {Args{"--nproc", "2"}, Args{"--mlflow", "http://127.0.0.1:9"}}) {
        Args run{"run", "--db", db(), "--try-fixes", "--set", "train.max_steps=2"};
        run.insert(run.end(), where.begin(), where.end());
        const auto refused = run_cli(run);
        EXPECT_EQ(refused.exit_code, 2) << where[0];
        EXPECT_NE(refused.err.find("--try-fixes: "), std::string::npos) << refused.err;
    }
    EXPECT_EQ(run_count(), 1u);
    const auto completed =
        run_cli({"run", "--db", db(), "--try-fixes", "--set", "train.max_steps=1"});
    EXPECT_EQ(completed.exit_code, 0) << completed.err;
    EXPECT_EQ(completed.out.find("trying fix"), std::string::npos) << completed.out;
    EXPECT_EQ(run_count(), 2u);
    // Out of memory: its one fix tried at once, and shown beside its prediction as `runs show`
    // shows it, with no hint to try it by hand.
    const auto capped =
        run_cli({"run", "--db", db(), "--try-fixes", "--set", "model.kind=bag", "--set",
                 "train.batch_size=512", "--set", "memory.cap_mb=8", "--set", "train.max_steps=2"});
    EXPECT_EQ(capped.exit_code, 3) << capped.err;
    EXPECT_NE(capped.out.find("trying fix 1 of 1: memory.cap_mb="), std::string::npos)
        << capped.out;
    EXPECT_NE(capped.out.find("tried in run 4 (fix of run 3: memory.cap_mb="), std::string::npos)
        << capped.out;
    EXPECT_EQ(capped.out.find("run one with --fix-of"), std::string::npos) << capped.out;
    EXPECT_EQ(run_count(), 4u);
}

// The estimator's record in the database: `runs calibration` lists the worst cases, and
// `estimate` says how often it was under the measured peak, and where a prediction of the
// same model was wrong here before.
TEST_F(SavedRuns, TheEstimatorsRecordIsShownBesideANewEstimate) {
    make_database();  // a real run: predicted and measured within a few percent
    {
        // A bag run that measured 25% more than its prediction, with a cause.
        RunStore store = RunStore::open(db());
        MemoryPrediction predicted;
        predicted.peak_bytes = 8 << 20;
        predicted.breakdown.activations = 8 << 20;
        predicted.worst_batch_length = 30;
        const auto id = store.create_run({"under", R"({"model":{"kind":"bag"}})", "cpu", "test",
                                          "test", 1, prediction_json(predicted)});
        RunOutcome measured(RunStatus::Completed);
        measured.steps = 4;
        measured.peak_bytes = 10 << 20;
        measured.breakdown.activations = 10 << 20;
        store.finish_run(id, measured);
    }
    const auto listed = run_cli({"runs", "calibration", "--db", db(), "--json"});
    ASSERT_EQ(listed.exit_code, 0) << listed.err;
    const auto record = nlohmann::json::parse(listed.out);
    EXPECT_EQ(record["runs"], 2);
    EXPECT_EQ(record["under"], 1);
    EXPECT_NEAR(record["worst_under"].get<double>(), 0.25, 1e-9);
    ASSERT_EQ(record["worst"].size(), 2u);
    EXPECT_EQ(record["worst"][0]["run_id"], 2);
    EXPECT_EQ(record["worst"][0]["model"], "bag");

    const auto text = run_cli({"runs", "calibration", "--db", db()});
    EXPECT_NE(text.out.find("2 runs here checked against the estimate: 1 needed more than it said, "
                            "by at most 25.0%"),
              std::string::npos)
        << text.out;
    const auto estimate = run_cli({"estimate", "--db", db()});
    ASSERT_EQ(estimate.exit_code, 0) << estimate.err;
    EXPECT_NE(estimate.out.find("record: 2 runs here checked"), std::string::npos) << estimate.out;
    EXPECT_NE(estimate.out.find("wrong here before: run 2 measured 10.0 MiB against 8.0 MiB "
                                "predicted (+25.0%)"),
              std::string::npos)
        << estimate.out;
    // Another model's estimate is not told of a bag run's miss.
    const auto other = run_cli({"estimate", "--db", db(), "--set", "model.kind=transformer"});
    EXPECT_EQ(other.out.find("wrong here before"), std::string::npos) << other.out;
    const auto as_json = run_cli({"estimate", "--db", db(), "--json"});
    EXPECT_EQ(nlohmann::json::parse(as_json.out)["record"]["under"], 1);
    // No database: no record, and none made.
    const auto none = run_cli({"estimate", "--db", file("none.sqlite"), "--json"});
    EXPECT_TRUE(nlohmann::json::parse(none.out)["record"].is_null());
    EXPECT_FALSE(std::filesystem::exists(file("none.sqlite")));
}

// A run too short to draw its data's worst batch is estimated for the batches it draws, and
// the estimate says what the worst would need, in text and JSON; fixed padding has no other.
TEST(Estimate, AShortRunSaysWhatItsDatasWorstBatchWouldNeed) {
    OOMLAB_REQUIRE_SHARED_DATA("trec.train.txt");
    const std::string data = test::shared_data_dir();
    const std::vector<std::string> trec = {
        "estimate",
        "--set",
        "dataset.path=" + data + "/trec.train.txt",
        "--set",
        "embeddings.source=synthetic",
        "--set",
        "model.kind=bilstm",
        "--set",
        "train.max_steps=12",
        "--db",
        (std::filesystem::temp_directory_path() / "none.sqlite")};
    const auto text = run_cli(trec);
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("the run is too short to draw its data's worst batch (37 tokens)"),
              std::string::npos)
        << text.out;
    std::vector<std::string> json_args = trec;
    json_args.push_back("--json");
    const auto estimate = nlohmann::json::parse(run_cli(json_args).out);
    EXPECT_EQ(estimate["batches"], "this_run");
    EXPECT_EQ(estimate["epoch_worst_length"], 37);
    EXPECT_LT(estimate["worst_batch_length"].get<int>(), 37);
    EXPECT_GT(estimate["epoch_worst_peak_bytes"].get<std::int64_t>(),
              estimate["peak_bytes"].get<std::int64_t>());
    json_args.insert(json_args.end() - 1, {"--set", "train.padding=fixed"});
    const auto fixed = nlohmann::json::parse(run_cli(json_args).out);
    EXPECT_EQ(fixed["epoch_worst_peak_bytes"], fixed["peak_bytes"]);
}

// With memory.alloc_conf the estimate says what the caching allocator reserves, and a cap the
// tensors fit under but the allocator's segments do not is called out before the run; the
// run then ends out of memory as said, for want of memory, not fragmentation: the 2.4 MiB
// table asks for a 20 MiB segment, which the 16 MiB cap does not hold.
TEST_F(SavedRuns, TheEstimateSaysWhenTheAllocatorsSegmentsDoNotFitTheCap) {
    const std::vector<std::string> settings = {"--set", "memory.alloc_conf=backend:native",
                                               "--set", "memory.cap_mb=16",
                                               "--set", "train.max_steps=2",
                                               "--db",  db()};
    std::vector<std::string> estimate = {"estimate"};
    estimate.insert(estimate.end(), settings.begin(), settings.end());
    const auto text = run_cli(estimate);
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("the caching allocator reserves"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("the allocator finds no room"), std::string::npos) << text.out;
    estimate.push_back("--json");
    const auto estimated = nlohmann::json::parse(run_cli(estimate).out);
    EXPECT_TRUE(estimated["caching_allocator"].get<bool>());
    EXPECT_TRUE(estimated["allocator_out_of_memory"].get<bool>());
    EXPECT_FALSE(estimated["fits"].get<bool>());
    EXPECT_LT(estimated["peak_bytes"].get<std::int64_t>(),
              estimated["cap_bytes"].get<std::int64_t>());
    EXPECT_GE(estimated["reserved_bytes"].get<std::int64_t>(), 20 << 20);

    std::vector<std::string> run = {"run"};
    run.insert(run.end(), settings.begin(), settings.end());
    const auto trained = run_cli(run);
    EXPECT_NE(trained.exit_code, 0);
    const std::string said = trained.out + trained.err;
    EXPECT_NE(said.find("not enough memory (not fragmentation)"), std::string::npos) << said;
    EXPECT_NE(said.find("a new segment for it reserves 20.0 MiB"), std::string::npos) << said;
}

}  // namespace
}  // namespace oomlab
