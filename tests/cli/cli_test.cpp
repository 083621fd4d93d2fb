// oomlab-cli end to end: the real binary on a temporary database.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "oomlab/common/format.h"
#include "oomlab/store/run_store.h"
#include "test_support.h"

namespace oomlab {
namespace {

using nlohmann::json;
using test::run_cli;
using Args = std::vector<std::string>;

class Cli : public ::testing::Test {
protected:
    std::string db() const { return m_dir.file("runs.sqlite"); }
    std::size_t run_count() const { return RunStore::open(db()).list_runs().size(); }
    test::TempDir m_dir;
};

TEST_F(Cli, DefaultRunOf30StepsIsRecordedAndLearns) {
    const auto result = run_cli({"run", "--set", "train.max_steps=30", "--db", db(), "--json"});
    ASSERT_EQ(result.exit_code, 0) << result.err << result.out;
    const json summary = json::parse(result.lines().back());
    for (const char* key : {"run_id", "status", "steps", "final_train_loss", "val_accuracy",
                            "peak_bytes", "wall_seconds", "device", "breakdown"}) {
        EXPECT_TRUE(summary.contains(key)) << key;
    }
    EXPECT_EQ(summary["status"], "completed");
    EXPECT_EQ(summary["steps"], 30);
    EXPECT_GT(summary["peak_bytes"].get<std::int64_t>(), 0);
    EXPECT_GT(summary["breakdown"]["embedding_table"].get<std::int64_t>(), 0);
    // Where its time went: the parts of a step, and together the run's wall time.
    const json& parts = summary["seconds_by_part"];
    double parts_sum = 0;
    for (const char* part :
         {"data", "forward", "backward", "update", "evaluation", "measurement", "recording"}) {
        ASSERT_TRUE(parts.contains(part)) << part << " in " << parts.dump();
        EXPECT_GT(parts[part].get<double>(), 0) << part;
    }
    for (const auto& [part, seconds] : parts.items()) {
        parts_sum += seconds.get<double>();
    }
    const double wall = summary["wall_seconds"].get<double>();
    EXPECT_NEAR(parts_sum, wall, 0.1 * wall + 0.02) << parts.dump();

    const RunStore store = RunStore::open(db());
    const auto run = store.find_run(summary["run_id"].get<std::int64_t>());
    ASSERT_TRUE(run);
    EXPECT_EQ(run->outcome.status, RunStatus::Completed);
    std::vector<double> losses;
    for (const auto& row : store.metrics(run->id)) {
        if (row.phase == "step") {
            losses.push_back(*row.loss);
        }
    }
    ASSERT_EQ(losses.size(), 30u);
    const double first = (losses[0] + losses[1] + losses[2]) / 3;
    const double last = (losses[27] + losses[28] + losses[29]) / 3;
    EXPECT_LT(last, first);
    EXPECT_NE(run->config_json.find("\"max_steps\": 30"), std::string::npos);
}

// Every run is stored with what the estimator predicted for it, and shown beside it: with
// momentum the table's gradient is a gradient, as predicted, not activations.
TEST_F(Cli, RunsShowTheFiguresBesideTheirPrediction) {
    ASSERT_EQ(run_cli({"run", "--set", "train.max_steps=5", "--set", "train.optimizer=momentum",
                       "--db", db()})
                  .exit_code,
              0);
    const json run = test::show_run_json(db(), 1);
    ASSERT_TRUE(run["prediction"].is_object());
    EXPECT_GT(run["prediction"]["peak_bytes"].get<std::int64_t>(), 0);
    const json& check = run["against_prediction"];
    EXPECT_EQ(check["not_comparable"], "");
    EXPECT_EQ(check["disagreements"], 0) << check.dump(1);
    bool gradients = false;
    for (const json& row : check["by_module"]) {
        if (row["module"] == "embeddings" && row["category"] == "gradients") {
            gradients = true;
            EXPECT_EQ(row["measured"], run["breakdown"]["embedding_table"]);
            EXPECT_EQ(row["predicted"], row["measured"]);
        }
    }
    EXPECT_TRUE(gradients) << check.dump(1);
    // The loss is a step, not a layer: what it holds is named temporaries.
    bool loss = false;
    for (const json& module : run["by_module"]) {
        if (module["module"] == "loss") {
            loss = true;
            EXPECT_FALSE(module.contains("activations")) << module.dump();
            EXPECT_GT(module["temporaries"].get<std::int64_t>(), 0) << module.dump();
        }
    }
    EXPECT_TRUE(loss) << run["by_module"].dump(1);
    const auto text = run_cli({"runs", "show", "1", "--db", db()});
    EXPECT_NE(text.out.find("activations  temporaries"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("predicted and measured at the peak"), std::string::npos);
    EXPECT_NE(text.out.find("0 figure(s) off by more than 10%"), std::string::npos) << text.out;
}

TEST_F(Cli, RunsListShowExportDelete) {
    ASSERT_EQ(
        run_cli({"run", "--set", "train.max_steps=5", "--db", db(), "--name", "tiny"}).exit_code,
        0);
    const auto list = run_cli({"runs", "list", "--db", db(), "--json"});
    ASSERT_EQ(list.exit_code, 0) << list.err;
    const json listed = json::parse(list.lines().at(0));
    EXPECT_EQ(listed["name"], "tiny");
    const std::string id = std::to_string(listed["run_id"].get<int>());

    const auto show = run_cli({"runs", "show", id, "--db", db(), "--json"});
    EXPECT_EQ(json::parse(show.out)["steps"], 5);

    const std::string csv = m_dir.file("run.csv");
    ASSERT_EQ(
        run_cli({"runs", "export", id, "--db", db(), "--format", "csv", "--out", csv}).exit_code,
        0);
    const std::string content = test::read_text(csv);
    // Every row names its run and rank, so rows of several runs and ranks stay apart.
    EXPECT_EQ(content.rfind("run_id,rank,step,phase,wall_ms,loss", 0), 0u);
    EXPECT_NE(content.find("\n" + id + ",0,5,step,"), std::string::npos);

    const auto exported = run_cli({"runs", "export", id, "--db", db(), "--format", "json"});
    const json document = json::parse(exported.out);
    EXPECT_EQ(document["config"]["train"]["max_steps"], 5);
    EXPECT_FALSE(document["metrics"].empty());
    // --json: the same document as one line, like every --json output.
    const auto one_line = run_cli({"runs", "export", id, "--db", db(), "--json"});
    ASSERT_EQ(one_line.lines().size(), 1u) << one_line.out;
    EXPECT_EQ(json::parse(one_line.lines()[0]), document);

    EXPECT_EQ(run_cli({"runs", "delete", id, "--db", db()}).exit_code, 0);
    EXPECT_EQ(run_count(), 0u);
    const auto missing = run_cli({"runs", "show", id, "--db", db()});
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_NE(missing.err.find("no run " + id), std::string::npos) << missing.err;
}

// Progress is printed from the rows the database holds: every figure shown is a stored one,
// for every model (the bag model once printed "loss nan, step peak 0.0 MiB").
TEST_F(Cli, ProgressShowsTheFiguresTheDatabaseHolds) {
    for (const char* model : {"bag", "bilstm", "transformer"}) {
        const auto result =
            run_cli({"run", "--db", db(), "--json", "--set", std::string("model.kind=") + model,
                     "--set", "train.max_steps=3"});
        ASSERT_EQ(result.exit_code, 0) << model << ": " << result.err;
        const std::string id =
            std::to_string(json::parse(result.lines().back())["run_id"].get<int>());
        const json stored =
            json::parse(run_cli({"runs", "export", id, "--db", db(), "--json"}).out);
        int shown = 0;
        for (const auto& line : result.lines()) {
            const json progress = json::parse(line);
            if (progress.value("type", "") != "progress") {
                continue;
            }
            ++shown;
            bool found = false;
            for (const json& row : stored["metrics"]) {
                if (row["phase"] == "step" && row["step"] == progress["step"]) {
                    found = true;
                    ASSERT_FALSE(progress["loss"].is_null()) << model;
                    EXPECT_EQ(progress["loss"], row["loss"]) << model;
                    EXPECT_EQ(progress["step_peak_bytes"], row["peak_bytes"]) << model;
                    EXPECT_GT(progress["step_peak_bytes"].get<std::int64_t>(), 0) << model;
                }
            }
            EXPECT_TRUE(found) << model << ": step " << progress["step"] << " is not stored";
        }
        EXPECT_GE(shown, 1) << model << ": the last step is always shown";

        // The text line shows the same figures, formatted for people.
        const auto text = run_cli({"run", "--db", db(), "--set", std::string("model.kind=") + model,
                                   "--set", "train.max_steps=3"});
        ASSERT_EQ(text.exit_code, 0) << text.err;
        const json last = json::parse(
            run_cli({"runs", "export", std::to_string(std::stoi(id) + 1), "--db", db(), "--json"})
                .out);
        json final_step;
        for (const json& row : last["metrics"]) {
            if (row["phase"] == "step" && row["step"] == 3) {
                final_step = row;
            }
        }
        ASSERT_FALSE(final_step.is_null()) << model;
        char loss[32];
        std::snprintf(loss, sizeof loss, "loss %.4f", final_step["loss"].get<double>());
        EXPECT_NE(text.out.find("step 3/3"), std::string::npos) << text.out;
        // Every line knows the step count, the first too (it printed 1/0 before).
        EXPECT_EQ(text.out.find("/0 "), std::string::npos) << text.out;
        EXPECT_NE(text.out.find(loss), std::string::npos) << loss << " in\n" << text.out;
        const std::string peak =
            "step peak " + format_bytes(final_step["peak_bytes"].get<std::int64_t>());
        EXPECT_NE(text.out.find(peak), std::string::npos) << peak << " in\n" << text.out;
        EXPECT_EQ(text.out.find("nan"), std::string::npos) << text.out;
    }
}

// A setting this run ignores is said where the run is watched and kept with the run, so nobody
// reads an effect into it; a setting the run uses is not.
TEST_F(Cli, SettingsTheRunIgnoresAreSaidAndStored) {
    const auto result =
        run_cli({"run", "--set", "train.max_steps=3", "--set", "distributed.shard=optimizer",
                 "--set", "model.heads=8", "--set", "train.batch_size=16", "--db", db()});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("[note] step 0: distributed.shard=optimizer has no effect here: "
                              "used when several processes train the run"),
              std::string::npos)
        << result.out;
    EXPECT_NE(result.out.find("[note] step 0: model.heads=8 has no effect here: used by "
                              "model.kind=transformer"),
              std::string::npos)
        << result.out;
    EXPECT_EQ(result.out.find("train.batch_size=16 has no effect"), std::string::npos);

    const RunStore store = RunStore::open(db());
    std::vector<std::string> notes;
    for (const EventRow& event : store.events(store.list_runs().front().id)) {
        if (event.kind == "note" && event.message.find("has no effect here") != std::string::npos) {
            notes.push_back(event.message.substr(0, event.message.find(' ')));
        }
    }
    EXPECT_EQ(notes, (std::vector<std::string>{"model.heads=8", "distributed.shard=optimizer"}));
}

TEST_F(Cli, RunsAreTaggedWhenRunAndLater) {
    ASSERT_EQ(
        run_cli({"run", "--set", "train.max_steps=2", "--db", db(), "--tags", "demo"}).exit_code,
        0);
    const json listed = json::parse(run_cli({"runs", "list", "--db", db(), "--json"}).out);
    EXPECT_EQ(listed["tags"], "demo");
    // The automatic name starts with the dataset, so runs of two datasets are told apart.
    EXPECT_EQ(listed["name"].get<std::string>().rfind("fortunes ", 0), 0u) << listed["name"];

    const std::string id = std::to_string(listed["run_id"].get<int>());
    const auto tagged = run_cli({"runs", "tag", id, "baseline, lecture 3", "--db", db(), "--json"});
    ASSERT_EQ(tagged.exit_code, 0) << tagged.err;
    EXPECT_EQ(json::parse(tagged.out)["tags"], "baseline, lecture 3");
    EXPECT_EQ(json::parse(run_cli({"runs", "show", id, "--db", db(), "--json"}).out)["tags"],
              "baseline, lecture 3");
    EXPECT_EQ(run_cli({"runs", "tag", "999", "x", "--db", db()}).exit_code, 2);
}

// Names and tags end up in JSON and the workbench: bytes that are not UTF-8 are refused
// before anything is trained or saved.
TEST_F(Cli, NamesAndTagsThatAreNotUtf8Exit2AndCreateNoRun) {
    const std::string latin1 = "caf\xE9";
    for (const char* option : {"--name", "--tags"}) {
        const auto result =
            run_cli({"run", "--set", "train.max_steps=2", "--db", db(), option, latin1});
        EXPECT_EQ(result.exit_code, 2) << option;
        EXPECT_NE(result.err.find("not valid UTF-8"), std::string::npos) << result.err;
    }
    EXPECT_EQ(run_count(), 0u);
}

// Another program's out-of-memory message, as an argument or on standard input (a pipe from
// the program that failed): what it means and what to try; text without one is bad input.
TEST_F(Cli, ExplainReadsAnOutOfMemoryMessage) {
    const std::string message =
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a "
        "total capacity of 79.14 GiB of which 3.56 MiB is free. Of the allocated memory 75.02 "
        "GiB is allocated by PyTorch, and 3.68 GiB is reserved by PyTorch but unallocated.";
    const auto text = run_cli({"explain", message});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_EQ(text.out.rfind("Fragmentation: ", 0), 0u) << text.out;
    EXPECT_NE(text.out.find("1. PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"),
              std::string::npos)
        << text.out;
    const test::CommandResult piped =
        test::run_command("printf '%s\\n' " + test::shell_quote(message) + " | " +
                          test::cli_program() + " explain --json");
    ASSERT_EQ(piped.exit_code, 0);
    const json explained = json::parse(piped.out);
    EXPECT_EQ(explained["verdict"], "fragmentation");
    EXPECT_EQ(explained["requested_bytes"], 20 << 20);
    const auto none = run_cli({"explain", "RuntimeError: shape mismatch"});
    EXPECT_EQ(none.exit_code, 2);
    EXPECT_NE(none.err.find("no out-of-memory message"), std::string::npos) << none.err;
}

TEST_F(Cli, UnknownKeyExits2WithSuggestionAndCreatesNoRun) {
    const auto result = run_cli({"run", "--set", "train.batchsize=8", "--db", db()});
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("did you mean \"train.batch_size\""), std::string::npos)
        << result.err;
    EXPECT_EQ(run_count(), 0u);
}

TEST_F(Cli, InvalidValueExits2NamingTheKey) {
    const auto result = run_cli({"run", "--set", "train.optimizer=lion", "--db", db()});
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("train.optimizer"), std::string::npos) << result.err;
    EXPECT_EQ(run_count(), 0u);
}

TEST_F(Cli, MalformedGloveFileExits2NamingFileAndLine) {
    const std::string glove = m_dir.file("broken.txt");
    test::write_file(glove, "the 0.1 0.2 0.3\nof 0.4 0.5 0.6\nand 0.7 oops 0.9\n");
    const auto info = run_cli({"glove", "info", glove});
    EXPECT_EQ(info.exit_code, 2);
    EXPECT_NE(info.err.find(glove + ":3"), std::string::npos) << info.err;

    const auto run = run_cli({"run", "--set", "embeddings.source=file", "--set",
                              "embeddings.path=" + glove, "--db", db()});
    EXPECT_EQ(run.exit_code, 2);
    EXPECT_NE(run.err.find(glove + ":3"), std::string::npos) << run.err;
    EXPECT_EQ(run_count(), 0u);
}

TEST_F(Cli, UnreadableDatasetExits2NamingTheFile) {
    const std::string missing = m_dir.file("nowhere.tsv");
    const auto result = run_cli({"run", "--set", "dataset.path=" + missing, "--db", db()});
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find(missing), std::string::npos) << result.err;
    EXPECT_EQ(run_count(), 0u);
}

TEST_F(Cli, OutOfMemoryUnderACapExits3AndIsRecorded) {
    const auto result = run_cli({"run", "--set", "memory.cap_mb=1", "--set",
                                 "model.kind=transformer", "--db", db(), "--json"});
    EXPECT_EQ(result.exit_code, 3) << result.err;
    const json summary = json::parse(result.lines().back());
    EXPECT_EQ(summary["status"], "oom");
    EXPECT_NE(summary["error"].get<std::string>().find("out of memory at step"), std::string::npos);
    const RunStore store = RunStore::open(db());
    const auto events = store.events(summary["run_id"].get<std::int64_t>());
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events.back().kind, "oom");
}

// A model larger than any machine is refused from the estimate before a byte of it exists:
// no LibTorch stack trace, no kernel's kill, no run left behind.
TEST_F(Cli, AModelLargerThanTheMachineIsRefusedBeforeItIsBuilt) {
    const auto result =
        run_cli({"run", "--db", db(), "--set", "model.kind=transformer", "--set",
                 "model.d_model=65536", "--set", "model.ffn=262144", "--set", "model.layers=64",
                 "--set", "memory.cap_mb=100", "--set", "embeddings.source=synthetic"});
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_NE(
        result.err.find("the model's parameters alone take 12288.23 GiB (model.d_model=65536"),
        std::string::npos)
        << result.err;
    EXPECT_NE(result.err.find("more than this machine's memory"), std::string::npos) << result.err;
    EXPECT_EQ(result.err.find("frame #"), std::string::npos) << result.err;
    EXPECT_EQ(run_count(), 0u);
}

// A model that fits the machine but far from its memory.cap_mb is never built whole: its
// parameters are counted from its shapes (building it to count them took 3.25 GB of host
// memory), and it runs out of memory at the cap, with the fixes that make it fit.
TEST_F(Cli, AModelFarOverItsCapIsNotBuiltToBeCounted) {
    const auto result =
        run_cli({"run", "--db", db(), "--set", "model.kind=transformer", "--set",
                 "model.d_model=4096", "--set", "model.ffn=16384", "--set", "model.layers=4",
                 "--set", "memory.cap_mb=100", "--set", "embeddings.source=synthetic"});
    EXPECT_EQ(result.exit_code, 3) << result.err;
    EXPECT_NE(result.out.find("out of memory at step 1 during setup"), std::string::npos)
        << result.out;
    rusage usage{};
    getrusage(RUSAGE_CHILDREN, &usage);
    EXPECT_LT(usage.ru_maxrss / 1024, 1024) << "MiB of host memory at most (805M parameters)";
}

// `record` checks --out before the program runs, and a file of the user's that is no memory
// record is replaced only with --force.
TEST_F(Cli, RecordChecksItsOutputBeforeTheProgramRuns) {
    const std::string marker = m_dir.file("ran");
    const std::vector<std::string> program = {"--", "/bin/sh", "-c", "touch " + marker};
    const auto record = [&](std::vector<std::string> arguments) {
        arguments.insert(arguments.begin(), "record");
        arguments.insert(arguments.end(), program.begin(), program.end());
        return run_cli(arguments);
    };
    const auto nowhere = record({"--out", m_dir.file("no/such/folder/x.pickle")});
    EXPECT_EQ(nowhere.exit_code, 2) << nowhere.err;
    EXPECT_NE(nowhere.err.find("--out"), std::string::npos) << nowhere.err;
    EXPECT_NE(nowhere.err.find("does not exist"), std::string::npos) << nowhere.err;
    EXPECT_FALSE(std::filesystem::exists(marker)) << "the program ran";
    const std::string notes = m_dir.file("notes.pickle");
    test::write_file(notes, "my notes");
    const auto taken = record({"--out", notes});
    EXPECT_EQ(taken.exit_code, 2) << taken.err;
    EXPECT_NE(taken.err.find("--force"), std::string::npos) << taken.err;
    EXPECT_FALSE(std::filesystem::exists(marker)) << "the program ran";
    std::ifstream kept(notes);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}), "my notes");
    const auto forced = record({"--out", notes, "--force"});
    EXPECT_EQ(forced.exit_code, 0) << forced.err;
    EXPECT_TRUE(std::filesystem::exists(marker));
}

TEST_F(Cli, GloveSynthThenInfoReportsTheShape) {
    const std::string file = m_dir.file("synth.txt");
    ASSERT_EQ(run_cli({"glove", "synth", "6B.50d", "--rows", "1000", "--out", file}).exit_code, 0);
    const auto info = run_cli({"glove", "info", file, "--json"});
    ASSERT_EQ(info.exit_code, 0) << info.err;
    const json described = json::parse(info.out);
    EXPECT_EQ(described["words"], 1000);
    EXPECT_EQ(described["dim"], 50);
    EXPECT_EQ(described["duplicates"], 0);
    EXPECT_EQ(described["format"], "glove");
}

// `--pace slow`: the run waits 120 ms after each step (its wall time holds the pauses), and
// trains the same steps to the same loss as at full speed; a pace it does not know is refused
// before any run is made.
TEST_F(Cli, APacedRunWaitsAfterEachStepAndTrainsTheSame) {
    constexpr int kSteps = 6;
    const Args run{"run",    "--db",  db(),
                   "--json", "--set", "train.max_steps=" + std::to_string(kSteps)};
    const auto full = run_cli(run);
    Args paced = run;
    paced.insert(paced.end(), {"--pace", "slow"});
    const auto slow = run_cli(paced);
    ASSERT_EQ(full.exit_code, 0) << full.err;
    ASSERT_EQ(slow.exit_code, 0) << slow.err;
    const json at_full = json::parse(full.lines().back());
    const json at_slow = json::parse(slow.lines().back());
    EXPECT_EQ(at_slow["steps"], kSteps);
    EXPECT_EQ(at_slow["final_train_loss"], at_full["final_train_loss"]);
    EXPECT_GE(at_slow["wall_seconds"].get<double>(), kSteps * 0.120) << at_slow.dump();

    const auto unknown = run_cli({"run", "--db", db(), "--pace", "fast"});
    EXPECT_EQ(unknown.exit_code, 2);
    EXPECT_NE(unknown.err.find("--pace: fast not in {full,watchable,slow}"), std::string::npos)
        << unknown.err;
    EXPECT_EQ(run_count(), 2u);
}

TEST_F(Cli, VersionHelpAndBadArguments) {
    const auto version = run_cli({"--version"});
    EXPECT_EQ(version.exit_code, 0);
    EXPECT_NE(version.out.find("oomlab-cli"), std::string::npos);
    EXPECT_EQ(run_cli({"--help"}).exit_code, 0);
    EXPECT_EQ(run_cli({"run", "--no-such-flag"}).exit_code, 2);
    const auto device = run_cli({"device", "--json"});
    EXPECT_EQ(json::parse(device.out)["devices"][0]["name"], "cpu");
}

}  // namespace
}  // namespace oomlab
