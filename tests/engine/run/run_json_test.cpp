// The JSON and CSV forms of runs that `oomlab-cli --json`, `runs export` and the workbench's
// exports share: what each field holds, absent values as null or empty cells, and the files
// an export may replace.
#include "oomlab/run/run_json.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include <nlohmann/json.hpp>

#include "bad_input.h"
#include "oomlab/run/breakdown.h"
#include "oomlab/run/memory_diff.h"
#include "oomlab/run/prediction_check.h"
#include "test_support.h"

namespace oomlab {
namespace {

using Json = nlohmann::json;

RunRecord ended_run() {
    RunRecord run;
    run.id = 7;
    run.name = "batch 64";
    run.device = "cpu";
    run.world_size = 2;
    run.outcome.status = RunStatus::Oom;
    run.outcome.steps = 3;
    run.outcome.peak_bytes = 12 << 20;
    run.outcome.final_train_loss = 1.5;
    run.outcome.breakdown.parameters = 2 << 20;
    run.outcome.breakdown.activations = 10 << 20;
    run.outcome.by_module = {{"head", 2 << 20, 0, 0, std::nullopt}};
    run.outcome.staircase = {{"weights", 2 << 20, std::nullopt}};
    run.outcome.fragmentation = Fragmentation{8 << 20, 8 << 20, 1 << 20, 5, 1 << 20};
    RankMemory rank1;
    rank1.rank = 1;
    rank1.peak_bytes = 13 << 20;
    run.ranks = {rank1};
    return run;
}

TEST(RunJson, TheSummarySaysWhatTheRecordHolds) {
    const Json summary = Json::parse(run_summary_json(ended_run()));
    EXPECT_EQ(summary["run_id"], 7);
    EXPECT_EQ(summary["status"], "oom");
    EXPECT_EQ(summary["final_train_loss"], 1.5);
    EXPECT_TRUE(summary["val_accuracy"].is_null()) << "not measured: null, not 0";
    EXPECT_EQ(summary["peak_bytes"], 12 << 20);
    // Every category of the breakdown, in the order the product names them.
    ASSERT_EQ(summary["breakdown"].size(), kBreakdownKeys.size());
    // Named: a range-for keeps only its outermost temporary alive, not the parsed object
    // whose member it walks (AddressSanitizer caught the read after free).
    const nlohmann::ordered_json in_order =
        nlohmann::ordered_json::parse(run_summary_json(ended_run()));
    std::size_t i = 0;
    for (const auto& [key, value] : in_order["breakdown"].items()) {
        EXPECT_EQ(key, kBreakdownKeys[i++]);
    }
    EXPECT_EQ(summary["breakdown"]["activations"], 10 << 20);
    EXPECT_EQ(summary["breakdown_recorded"], true);
    EXPECT_TRUE(summary["fixes"].empty()) << "none stored";
    EXPECT_TRUE(summary["fix_of"].is_null());
    // Stored fixes come back as they were; a damaged row gives null, and the summary stays JSON.
    RunRecord kept = ended_run();
    kept.fixes_json = R"([{"set": {"memory.cap_mb": "16"}, "predicted_peak_bytes": 9}])";
    kept.fix_of = 3;
    const Json withFixes = Json::parse(run_summary_json(kept));
    EXPECT_EQ(withFixes["fixes"][0]["set"]["memory.cap_mb"], "16");
    EXPECT_EQ(withFixes["fix_of"], 3);
    kept.fixes_json = "[{not json";
    EXPECT_TRUE(Json::parse(run_summary_json(kept))["fixes"].is_null());
    EXPECT_TRUE(summary["by_module"][0]["activations"].is_null()) << "not measured on CUDA";
    EXPECT_EQ(summary["staircase"][0]["stage"], "weights");
    EXPECT_TRUE(summary["fragmentation"]["fragmented"].get<bool>())
        << "9 MiB free in all, no block of the 8 MiB asked for";
    EXPECT_EQ(summary["ranks"][0]["rank"], 1);
    EXPECT_TRUE(summary["ranks"][0]["status"].is_null()) << "a rank that never said how it ended";
    EXPECT_TRUE(summary["prediction"].is_null()) << "runs of older versions have none";
    EXPECT_TRUE(summary["against_prediction"].is_null());
}

// A run killed before its summary has only its peak: its breakdown is said not recorded, and
// neither the check against its prediction nor a diff treats its zeros as measured.
TEST(RunJson, ARunWithoutItsBreakdownIsNotComparedByCategory) {
    RunRecord run = ended_run();
    run.outcome.status = RunStatus::Failed;
    run.outcome.breakdown = {};
    run.outcome.by_module.clear();
    MemoryPrediction prediction;
    prediction.peak_bytes = 12 << 20;
    prediction.breakdown.parameters = 2 << 20;
    prediction.breakdown.activations = 10 << 20;
    run.prediction = prediction;
    const Json summary = Json::parse(run_summary_json(run));
    EXPECT_EQ(summary["breakdown_recorded"], false);
    const PredictionCheck check = check_prediction(prediction, run.outcome);
    EXPECT_NE(check.not_comparable.find("before it recorded its breakdown"), std::string::npos);
    ASSERT_EQ(check.by_category.size(), 1u);
    EXPECT_EQ(check.by_category[0].category, "peak");
    EXPECT_EQ(check.disagreements(), 0);
    const MemoryDiff diff = diff_memory(run.outcome, ended_run().outcome);
    EXPECT_TRUE(diff.by_category.empty());
    EXPECT_TRUE(diff.by_module.empty());
    ASSERT_EQ(diff.notes.size(), 1u);
    EXPECT_EQ(diff.notes[0], "A (failed) has no breakdown recorded: only the peaks are compared");
}

TEST(RunJson, ARunWithItsPredictionIsCheckedAgainstIt) {
    RunRecord run = ended_run();
    run.outcome.status = RunStatus::Completed;
    MemoryPrediction prediction;
    prediction.peak_bytes = 6 << 20;
    prediction.breakdown.parameters = 2 << 20;
    prediction.breakdown.activations = 4 << 20;
    run.prediction = prediction;
    const Json summary = Json::parse(run_summary_json(run));
    EXPECT_EQ(summary["prediction"]["peak_bytes"], 6 << 20);
    const PredictionCheck check = check_prediction(prediction, run.outcome);
    EXPECT_EQ(summary["against_prediction"]["disagreements"], check.disagreements());
    EXPECT_GE(check.disagreements(), 2) << "the peak and the activations are off by 2.5x";
    bool activations_marked = false;
    for (const Json& row : summary["against_prediction"]["by_category"]) {
        if (row["category"] == "activations") {
            EXPECT_EQ(row["predicted"], 4 << 20);
            EXPECT_EQ(row["measured"], 10 << 20);
            activations_marked = row["disagrees"].get<bool>();
        }
    }
    EXPECT_TRUE(activations_marked);
}

// The loss, the update and the rest are no layers: what they hold is their step's
// temporaries, under that name in the JSON, in a diff and against a prediction.
TEST(RunJson, AStepsTemporariesAreNotActivations) {
    RunRecord run = ended_run();
    run.outcome.status = RunStatus::Completed;
    run.outcome.by_module = {{"head", 1 << 20, 1 << 20, 0, 3 << 20},
                             {"optimizer", 0, 0, 0, 5 << 20}};
    const Json summary = Json::parse(run_summary_json(run));
    EXPECT_EQ(summary["by_module"][0]["activations"], 3 << 20);
    EXPECT_FALSE(summary["by_module"][0].contains("temporaries"));
    EXPECT_EQ(summary["by_module"][1]["temporaries"], 5 << 20);
    EXPECT_FALSE(summary["by_module"][1].contains("activations"));

    RunOutcome smaller = run.outcome;
    smaller.by_module[1].activations = 1 << 20;
    const MemoryDiff diff = diff_memory(run.outcome, smaller);
    ASSERT_EQ(diff.by_module.size(), 1u);
    EXPECT_EQ(diff.by_module[0].module, "optimizer");
    EXPECT_EQ(diff.by_module[0].category, "temporaries");

    // A prediction stored by an older version named them activations: still read.
    const std::optional<MemoryPrediction> old = parse_prediction_json(
        R"({"peak_bytes": 9, "breakdown": {}, "by_module": [{"module": "optimizer",)"
        R"( "activations": 7}]})");
    ASSERT_TRUE(old);
    EXPECT_EQ(old->by_module[0].temporaries(), 7);
    MemoryPrediction predicted;
    predicted.by_module = run.outcome.by_module;
    const std::optional<MemoryPrediction> back = parse_prediction_json(prediction_json(predicted));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->by_module[1].temporaries(), 5 << 20);
    EXPECT_EQ(back->by_module[0].layer_activations(), 3 << 20);
    const PredictionCheck check = check_prediction(predicted, run.outcome);
    ASSERT_EQ(check.by_module.size(), 4u);  // the head's three kinds, the update's one
    EXPECT_EQ(check.by_module[3].category, "temporaries");
    EXPECT_EQ(check.by_module[3].module, "optimizer");
}

TEST(RunJson, NamesThatAreNotUtf8AreWrittenNotRefused) {
    RunRecord run = ended_run();
    run.name = "bad \xff name";
    const Json summary = Json::parse(run_summary_json(run));
    EXPECT_EQ(summary["name"], "bad \xEF\xBF\xBD name");
}

TEST(RunJson, TheExportHoldsTheRunItsMetricsAndEvents) {
    MetricRow step;
    step.step = 1;
    step.phase = "step";
    step.loss = 0.5;
    step.rank = 1;
    const std::string text = run_export_json(ended_run(), {step}, {{1, "oom", "out of memory"}});
    const Json document = Json::parse(text);
    EXPECT_EQ(document["run_id"], 7);
    ASSERT_EQ(document["metrics"].size(), 1u);
    EXPECT_EQ(document["metrics"][0]["loss"], 0.5);
    EXPECT_EQ(document["metrics"][0]["rank"], 1);
    EXPECT_TRUE(document["metrics"][0]["peak_bytes"].is_null());
    ASSERT_EQ(document["events"].size(), 1u);
    EXPECT_EQ(document["events"][0]["kind"], "oom");
}

TEST(RunJson, TheCsvKeepsRunsAndRanksApartAndLeavesAbsentCellsEmpty) {
    MetricRow step;
    step.step = 2;
    step.phase = "step";
    step.loss = 0.25;
    step.peak_bytes = 4096;
    MetricRow eval = step;
    eval.phase = "eval";
    eval.loss.reset();
    eval.accuracy = 0.75;
    eval.rank = 1;
    const std::string csv = metrics_csv({{7, {step}}, {8, {eval}}});
    std::istringstream lines(csv);
    std::string header, first, second, end;
    std::getline(lines, header);
    std::getline(lines, first);
    std::getline(lines, second);
    EXPECT_FALSE(std::getline(lines, end));
    EXPECT_EQ(header.rfind("run_id,rank,step,phase,wall_ms,loss,accuracy,", 0), 0u) << header;
    const auto cells = [](const std::string& line) {
        std::vector<std::string> list;
        std::istringstream in(line);
        for (std::string cell; std::getline(in, cell, ',');) {
            list.push_back(cell);
        }
        if (!line.empty() && line.back() == ',') {
            list.emplace_back();
        }
        return list;
    };
    const auto names = cells(header);
    ASSERT_EQ(cells(first).size(), names.size());
    ASSERT_EQ(cells(second).size(), names.size());
    const auto column = [&](const std::string& line, const std::string& name) {
        const auto at = std::find(names.begin(), names.end(), name) - names.begin();
        return cells(line)[std::size_t(at)];
    };
    EXPECT_EQ(column(first, "run_id"), "7");
    EXPECT_EQ(column(first, "loss"), "0.25");
    EXPECT_EQ(column(first, "accuracy"), "");
    EXPECT_EQ(column(first, "peak_bytes"), "4096");
    EXPECT_EQ(column(second, "run_id"), "8");
    EXPECT_EQ(column(second, "rank"), "1");
    EXPECT_EQ(column(second, "loss"), "");
    EXPECT_EQ(column(second, "accuracy"), "0.75");
}

// An export may replace an earlier export, never a file of something else.
TEST(RunJson, OnlyExportsAreExportFiles) {
    test::TempDir dir;
    test::write_file(dir.file("metrics.csv"), metrics_csv({{1, {}}}));
    test::write_file(dir.file("run.json"), run_export_json(ended_run(), {}, {}));
    test::write_file(dir.file("compact.json"), run_summary_json(ended_run()));
    test::write_file(dir.file("notes.csv"), "step,loss\n1,0.5\n");
    test::write_file(dir.file("config.json"), "{\"train\": {}}");
    EXPECT_TRUE(is_run_export_file(dir.file("metrics.csv")));
    EXPECT_TRUE(is_run_export_file(dir.file("run.json")));
    EXPECT_TRUE(is_run_export_file(dir.file("compact.json")));
    EXPECT_FALSE(is_run_export_file(dir.file("notes.csv")));
    EXPECT_FALSE(is_run_export_file(dir.file("config.json")));
    EXPECT_FALSE(is_run_export_file(dir.file("missing.csv")));
}

// A summary another machine wrote reads back as the run it described (what an import from a
// tracker keeps), and a value of the wrong type is named by its key.
TEST(RunJson, ASummaryReadsBackAsTheRunItDescribes) {
    RunRecord run = ended_run();
    run.outcome.by_module.push_back({"loss", 0, 0, 0, 64});
    run.prediction = MemoryPrediction{11 << 20, {}, {{"head", 2 << 20, 0, 0, 5}}, 64, true};
    run.fixes_json = R"([{"set":{"train.batch_size":"32"}}])";
    run.tracker_tags = {{"oomlab.lesson", "batch-size"}, {"oomlab.lesson_run", "2"}};
    const RunRecord back = run_from_summary_json(run_summary_json(run), "summary.json");
    EXPECT_EQ(back.tracker_tags, run.tracker_tags);
    EXPECT_EQ(back.name, run.name);
    EXPECT_EQ(back.device, run.device);
    EXPECT_EQ(back.world_size, 2);
    EXPECT_EQ(back.outcome.status, RunStatus::Oom);
    EXPECT_EQ(back.outcome.steps, 3);
    EXPECT_EQ(back.outcome.peak_bytes, run.outcome.peak_bytes);
    EXPECT_EQ(back.outcome.final_train_loss, 1.5);
    EXPECT_FALSE(back.outcome.val_accuracy);
    EXPECT_EQ(back.outcome.breakdown.activations, run.outcome.breakdown.activations);
    ASSERT_EQ(back.outcome.by_module.size(), 2u);
    EXPECT_FALSE(back.outcome.by_module[0].activations) << "not measured stays not measured";
    EXPECT_EQ(back.outcome.by_module[1].temporaries(), 64);
    ASSERT_EQ(back.outcome.staircase.size(), 1u);
    EXPECT_EQ(back.outcome.staircase[0].allocated_bytes, 2 << 20);
    ASSERT_TRUE(back.outcome.fragmentation);
    EXPECT_EQ(back.outcome.fragmentation->largest_free_block, 1 << 20);
    ASSERT_TRUE(back.prediction);
    EXPECT_EQ(back.prediction->by_module.at(0).activations, 5);
    EXPECT_EQ(Json::parse(back.fixes_json), Json::parse(run.fixes_json));

    const std::string message = test::bad_input_message([] {
        run_from_summary_json(R"({"status":"oom","breakdown":{"activations":"lots"}})",
                              "run 9's summary.json");
    });
    EXPECT_NE(message.find("run 9's summary.json: breakdown.activations is \"lots\""),
              std::string::npos)
        << message;
    EXPECT_NE(test::bad_input_message([] {
                  run_from_summary_json(R"({"status":"?"})", "s");
              }).find("status"),
              std::string::npos);
}

// Figures no run can have are refused by key, not stored: a negative peak, breakdown or step
// count, a world of -7, a number past any machine, a time of 9e18 s.
TEST(RunSummary, FiguresNoRunCanHaveAreRefusedByKey) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {R"("peak_bytes": -5)", "peak_bytes is -5, not a whole number from 0 to"},
        {R"("steps": -3)", "steps is -3, not a whole number from 0 to"},
        {R"("world_size": -7)", "world_size is -7, not a whole number from 1 to 65536"},
        {R"("peak_bytes": 1e300)", "peak_bytes is 1e+300, not a whole number"},
        {R"("breakdown": {"activations": -1073741824})",
         "breakdown.activations is -1073741824, not a whole number from 0"},
        {R"("wall_seconds": 9e18)", "wall_seconds is 9e+18, not a time a run took"},
        {R"("by_module": [{"module": "head", "parameters": -1}])", "by_module[0].parameters is -1"},
    };
    for (const auto& [field, said] : cases) {
        const std::string message = test::bad_input_message(
            [&] { run_from_summary_json(R"({"status": "completed", )" + field + "}", "s.json"); });
        EXPECT_NE(message.find("s.json: " + said), std::string::npos) << message;
    }
}

// A whole run written by run_export_json reads back with every row of each phase and its
// events (what an import from MLflow takes in one request), and a row no run can have is
// refused by its place.
TEST(RunExportRead, AWholeRunReadsBackWithItsRowsAndEvents) {
    RunRecord run = ended_run();
    run.notes = "the head was too wide";
    run.config_json = R"({"train":{"batch_size":64}})";
    MetricRow forward;
    forward.rank = 1;
    forward.step = 3;
    forward.phase = "forward";
    forward.wall_ms = 12.5;
    forward.allocated_bytes = 7 << 20;
    forward.alloc_retries = 2;
    MetricRow eval = forward;
    eval.phase = "eval";
    eval.loss = 0.75;
    eval.accuracy = 0.5;
    eval.allocated_bytes.reset();
    const RunExport back = run_from_export_json(
        run_export_json(run, {forward, eval}, {{3, "oom", "out of memory at step 3"}}, -1),
        "run.json");
    EXPECT_EQ(back.run.name, run.name);
    EXPECT_EQ(back.run.outcome.status, RunStatus::Oom);
    EXPECT_EQ(back.run.notes, run.notes);
    EXPECT_EQ(Json::parse(back.run.config_json), Json::parse(run.config_json));
    ASSERT_EQ(back.metrics.size(), 2u);
    EXPECT_EQ(back.metrics[0].rank, 1);
    EXPECT_EQ(back.metrics[0].step, 3);
    EXPECT_EQ(back.metrics[0].phase, "forward");
    EXPECT_EQ(back.metrics[0].wall_ms, 12.5);
    EXPECT_EQ(back.metrics[0].allocated_bytes, 7 << 20);
    EXPECT_EQ(back.metrics[0].alloc_retries, 2);
    EXPECT_FALSE(back.metrics[0].loss) << "not measured stays not measured";
    EXPECT_EQ(back.metrics[1].accuracy, 0.5);
    EXPECT_FALSE(back.metrics[1].allocated_bytes);
    ASSERT_EQ(back.events.size(), 1u);
    EXPECT_EQ(back.events[0].kind, "oom");
    EXPECT_EQ(back.events[0].message, "out of memory at step 3");

    const std::vector<std::pair<std::string, std::string>> cases = {
        {R"("metrics": [{"step": 1}, {"step": -2}])", "metrics[1].step is -2, not a whole"},
        {R"("metrics": [{"allocated_bytes": -5}])", "metrics[0].allocated_bytes is -5"},
        {R"("metrics": [{"wall_ms": -1}])", "metrics[0].wall_ms is -1, not a time"},
        {R"("metrics": [7])", "metrics[0] is 7, not an object"},
        {R"("metrics": {"step": 1})", "metrics is {\"step\":1}, not a list"},
        {R"("events": [{"kind": 3}])", "events[0].kind is 3, not a text"},
    };
    for (const auto& [field, said] : cases) {
        const std::string message = test::bad_input_message(
            [&] { run_from_export_json(R"({"status": "completed", )" + field + "}", "run.json"); });
        EXPECT_NE(message.find("run.json: " + said), std::string::npos) << message;
    }
}

}  // namespace
}  // namespace oomlab
