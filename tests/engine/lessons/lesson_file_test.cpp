// Lessons without the CLI: their files (every installed lesson loads, a bad one is refused
// naming the file and key), the metrics and claims, and a lesson run into a store in-process
// with its claims checked against what it measured.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <set>

#include "oomlab/common/errors.h"
#include "oomlab/config/config_io.h"
#include "oomlab/lessons/lesson.h"
#include "oomlab/store/run_store.h"
#include "test_support.h"

namespace oomlab {
namespace {

TEST(Lessons, EveryInstalledLessonLoadsAndItsClaimsNameItsRuns) {
    std::vector<BrokenLesson> broken;
    const std::vector<Lesson> lessons = load_lessons(lessons_folder(), &broken);
    EXPECT_TRUE(broken.empty()) << broken.front().why;
    ASSERT_GE(lessons.size(), 10u);
    for (const Lesson& lesson : lessons) {
        SCOPED_TRACE(lesson.name);
        EXPECT_FALSE(lesson.title.empty());
        EXPECT_GE(lesson.runs.size(), 2u) << "a lesson compares runs";
        EXPECT_FALSE(lesson.claims.empty()) << "a lesson claims an effect it checks";
        std::set<std::string> labels;
        for (const LessonRun& run : lesson.runs) {
            EXPECT_TRUE(labels.insert(run.label).second) << "two runs named " << run.label;
            EXPECT_NO_THROW(validate_config(lesson_config(lesson, run)));
        }
        for (const LessonClaim& claim : lesson.claims) {
            for (const std::string& label : {claim.smaller, claim.than, claim.label}) {
                EXPECT_TRUE(label.empty() || labels.count(label)) << describe_claim(claim);
            }
        }
    }
    EXPECT_EQ(find_lesson(lessons, "batch-size").name, "batch-size");
    EXPECT_THROW(find_lesson(lessons, "no-such-lesson"), BadInput);
}

// On a CUDA device a lesson may take other settings and claims ("on_cuda"), saying why.
TEST(Lessons, OnCudaSettingsAndClaimsApplyOnlyThere) {
    const Lesson lesson = parse_lesson(R"({"title": "t", "explanation": "e",
        "base": {"memory.cap_mb": 210},
        "runs": [{"label": "a", "set": {"train.batch_size": 16}},
                 {"label": "b", "set": {"memory.cap_mb": 400}}],
        "claims": [{"metric": "peak_bytes", "smaller": "a", "than": "b", "at_most": 0.5}],
        "on_cuda": {"set": {"memory.cap_mb": 255},
                    "claims": [{"metric": "mean_reserved", "smaller": "a", "than": "b"}],
                    "why": "the device holds more"}})",
                                       "cuda.json");
    ASSERT_TRUE(lesson.on_cuda);
    EXPECT_EQ(lesson.on_cuda->why, "the device holds more");
    EXPECT_EQ(lesson_config(lesson, lesson.runs[0]).memory.cap_mb, 210);
    EXPECT_EQ(lesson_config(lesson, lesson.runs[0], true).memory.cap_mb, 255);
    EXPECT_EQ(lesson_config(lesson, lesson.runs[0], true).train.batch_size, 16);
    EXPECT_EQ(lesson_config(lesson, lesson.runs[1], true).memory.cap_mb, 400) << "the run's own";
    EXPECT_EQ(lesson_claims(lesson, false).front().metric, "peak_bytes");
    EXPECT_EQ(lesson_claims(lesson, true).front().metric, "mean_reserved");
    // Here (no GPU) a lesson on "auto" runs on the CPU, as written.
    const LessonDevice device = lesson_device(lesson);
    if (!device.cuda) {
        EXPECT_TRUE(device.instead.empty());
        EXPECT_TRUE(device.note.empty());
    }
}

TEST(Lessons, AnOnCudaWithoutItsReasonOrWithABadClaimIsRefused) {
    const auto refusal = [](const std::string& on_cuda) {
        try {
            parse_lesson(R"({"title": "t", "explanation": "e",
                             "runs": [{"label": "a"}, {"label": "b"}], "on_cuda": )" +
                             on_cuda + "}",
                         "cuda.json");
        } catch (const BadInput& error) {
            return std::string(error.what());
        }
        return std::string("accepted");
    };
    EXPECT_NE(refusal(R"({"set": {"memory.cap_mb": 255}})").find("on_cuda"), std::string::npos);
    EXPECT_NE(refusal(R"({"why": "w", "claims": [{"metric": "nothing", "smaller": "a",
                          "than": "b"}]})")
                  .find("on_cuda.claims[0].metric"),
              std::string::npos);
    EXPECT_NE(refusal(R"("later")").find("on_cuda"), std::string::npos);
}

// A key the format does not have is refused, naming its line and the closest key it has: a
// "claim" for "claims" made a lesson of no claims that always passed, a run's "settings" for
// "set" trained the base's batch size.
TEST(Lessons, AnUnknownKeyIsRefusedWithItsLineAndTheClosestKnownOne) {
    const auto refusal = [](const std::string& json) {
        try {
            parse_lesson(json, "typo.json");
        } catch (const BadInput& error) {
            return std::string(error.what());
        }
        return std::string("accepted");
    };
    const std::string runs = R"("runs": [{"label": "a"}, {"label": "b"}])";
    const std::string claim = R"({"metric": "peak_bytes", "smaller": "a", "than": "b"})";
    struct Case {
        std::string json;
        std::string said;
    };
    const std::vector<Case> cases = {
        {"{\"title\": \"t\", \"explanation\": \"e\", " + runs + ",\n\"claim\": [" + claim + "]}",
         "typo.json:2: claim: unknown key; did you mean \"claims\"?"},
        {R"({"title": "t", "explanation": "e",
            "runs": [{"label": "a", "settings": {"train.batch_size": 4}}, {"label": "b"}]})",
         "typo.json:2: runs[0].settings: unknown key; did you mean \"set\"?"},
        {"{\"title\": \"t\", \"explanation\": \"e\", " + runs +
             ", \"claims\": [{\"metric\": \"peak_bytes\", \"smaller\": \"a\", \"than\": \"b\", "
             "\"at_mots\": 0.5}]}",
         "claims[0].at_mots: unknown key; did you mean \"at_most\"?"},
        {"{\"title\": \"t\", \"explanation\": \"e\", " + runs + ", \"claims\": [" + claim +
             "], \"hides\": [\"train.seed\"]}",
         "hides: unknown key; did you mean \"hide\"?"},
        {"{\"title\": \"t\", \"explanation\": \"e\", " + runs + ", \"claims\": [" + claim +
             "], \"on_cuda\": {\"why\": \"w\", \"claim\": []}}",
         "on_cuda.claim: unknown key; did you mean \"claims\"?"},
        {"{\"title\": \"t\", \"explanation\": \"e\", " + runs +
             ", \"claims\": [{\"run\": \"a\", \"status\": \"oom\", \"after_step\": 3}]}",
         "claims[0].after_step: unknown key; did you mean \"after_steps\"?"},
    };
    for (const Case& c : cases) {
        const std::string said = refusal(c.json);
        EXPECT_NE(said.find(c.said), std::string::npos) << said << "\nexpected: " << c.said;
    }
}

TEST(Lessons, AFileWithABadKeyNamesTheFileAndTheKey) {
    try {
        parse_lesson(R"({"title": "t", "explanation": "e",
                         "runs": [{"label": "a", "set": {"train.batchsize": 4}},
                                  {"label": "b"}]})",
                     "broken.json");
        FAIL() << "accepted an unknown key";
    } catch (const BadInput& error) {
        const std::string message = error.what();
        EXPECT_NE(message.find("broken.json"), std::string::npos) << message;
        EXPECT_NE(message.find("train.batch_size"), std::string::npos) << message;
    }
}

// A run whose settings `run` would refuse together (each key alone valid) is refused when the
// lesson is read, naming the file, the run's line and its label: `lesson check` passed them.
TEST(Lessons, ARunThatRunWouldRefuseIsRefusedWhenTheLessonIsRead) {
    const auto refusal = [](const std::string& set) {
        try {
            parse_lesson(R"({"title": "t", "explanation": "e",
 "runs": [{"label": "a"},
  {"label": "b", "set": )" + set +
                             R"(}],
 "claims": [{"run": "a", "status": "completed"}]})",
                         "together.json");
        } catch (const BadInput& error) {
            return std::string(error.what());
        }
        return std::string("accepted");
    };
    const std::string heads =
        refusal(R"({"model.kind": "transformer", "model.d_model": 100, "model.heads": 3})");
    EXPECT_NE(heads.find("together.json:3: runs[1] (\"b\"): "), std::string::npos) << heads;
    EXPECT_NE(heads.find("must be divisible by model.heads"), std::string::npos) << heads;
    const std::string sparse =
        refusal(R"({"embeddings.sparse_grad": true, "train.optimizer": "adam"})");
    EXPECT_NE(sparse.find("runs[1] (\"b\"): embeddings.sparse_grad=true"), std::string::npos)
        << sparse;
    // A dataset that is not there, as `run` finds it before it trains.
    const std::string missing = refusal(R"({"dataset.path": "/no/such/folder/train.tsv"})");
    EXPECT_NE(missing.find("together.json:3: runs[1] (\"b\"): "), std::string::npos) << missing;
    EXPECT_NE(missing.find("/no/such/folder/train.tsv"), std::string::npos) << missing;
    EXPECT_NE(missing.find("dataset.path"), std::string::npos) << missing;
}

// A control character in a lesson's texts (a terminal's title escape, a clear screen) is shown
// as '?', never printed as is; the explanation keeps its line breaks.
TEST(Lessons, ControlCharactersInItsTextsAreShownAsQuestionMarks) {
    const Lesson lesson = parse_lesson(R"({"title": "\u001b]0;pwned\u0007Batch",
 "explanation": "One.\nTwo\u001b[2J.",
 "runs": [{"label": "a\tb"}, {"label": "c"}],
 "claims": [{"run": "a\tb", "status": "completed"}]})",
                                       "escapes.json");
    EXPECT_EQ(lesson.title, "?]0;pwned?Batch");
    EXPECT_EQ(lesson.explanation, "One.\nTwo?[2J.");
    EXPECT_EQ(lesson.runs[0].label, "a?b");
    EXPECT_EQ(lesson.claims[0].label, "a?b") << "the claim still names its run";
}

// One lesson file that does not read leaves the folder's others usable, and is named with why.
TEST(Lessons, OneBrokenFileLeavesTheOthersAndIsNamed) {
    test::TempDir dir;
    for (const std::string& name : {std::string("batch-size"), std::string("padding")}) {
        test::write_file(dir.file(name + ".json"),
                         test::read_text(lessons_folder() + "/" + name + ".json"));
    }
    test::write_file(dir.file("broken.json"), R"({"title": "t", "explanation": "e",
 "runs": [{"label": "a"}, {"label": "b"}], "claim": []})");
    std::vector<BrokenLesson> broken;
    const std::vector<Lesson> lessons = load_lessons(dir.path(), &broken);
    ASSERT_EQ(lessons.size(), 2u);
    EXPECT_EQ(lessons[0].name, "batch-size");
    EXPECT_EQ(lessons[1].name, "padding");
    ASSERT_EQ(broken.size(), 1u);
    EXPECT_EQ(broken[0].name, "broken");
    EXPECT_NE(broken[0].why.find("broken.json:2: claim: unknown key"), std::string::npos)
        << broken[0].why;
}

TEST(Lessons, EachRunOfALessonWritesItsOwnMemorySnapshot) {
    const Lesson lesson = parse_lesson(R"({"title": "t", "explanation": "e",
                         "base": {"debug.memory_snapshot": "snap.pickle"},
                         "runs": [{"label": "a"}, {"label": "b"}]})",
                                       "snapshots.json");
    for (const LessonRun& run : lesson.runs) {
        EXPECT_EQ(lesson_config(lesson, run).debug.memory_snapshot, "snap.run{run}.pickle");
    }
}

// Why a lesson file is refused; empty when it is accepted.
std::string refusal(const std::string& json) {
    try {
        parse_lesson(json, "lesson.json");
    } catch (const BadInput& error) {
        return error.what();
    }
    return {};
}

// A transformer lesson of runs a and b with these claims.
std::string parse_error(const std::string& claims) {
    return refusal(R"({"title": "t", "explanation": "e", "base": {"model.kind": "transformer"},
                       "runs": [{"label": "a"}, {"label": "b"}], "claims": )" +
                   claims + "}");
}

TEST(Lessons, AClaimOnAMetricNobodyMeasuresIsRefusedOnLoad) {
    const std::string unknown =
        parse_error(R"([{"metric": "activation", "smaller": "a", "than": "b"}])");
    EXPECT_NE(unknown.find("lesson.json:2: claims[0].metric"), std::string::npos) << unknown;
    EXPECT_NE(unknown.find("\"activation\""), std::string::npos) << unknown;
    EXPECT_NE(parse_error(R"([{"metric": "weights@block 1", "smaller": "a", "than": "b"}])"), "");
    EXPECT_NE(parse_error(R"([{"metric": "activations@", "smaller": "a", "than": "b"}])"), "");
    EXPECT_NE(parse_error(R"([{"largest": "bytes", "run": "a", "module": "head"}])"), "");
    EXPECT_NE(parse_error(R"([{"largest": "activations", "run": "a"}])"), "");  // no module
    EXPECT_EQ(parse_error(R"([{"metric": "activations@block 1", "smaller": "a", "than": "b"},
                              {"largest": "activations", "run": "a", "module": "block 1"}])"),
              "");
}

// A refusal names the line of what it refuses, in a file written by hand over many lines: a
// setting's key in a run's "set", a claim's field.
TEST(Lessons, ARefusalNamesTheLineOfTheKey) {
    const std::string lesson = R"({
  "title": "t",
  "explanation": "e",
  "runs": [
    {"label": "a"},
    {"label": "b",
     "set": {"train.batch_size": 8,
             "train.batchsize": 16}}
  ],
  "claims": []
})";
    const std::string message = refusal(lesson);
    EXPECT_EQ(message.rfind("lesson.json:8: runs[1].set: ", 0), 0u) << message;
    EXPECT_NE(message.find("train.batchsize"), std::string::npos) << message;
    std::string claim = lesson;
    claim.replace(claim.find(R"("claims": [])"), 12,
                  "\"claims\": [\n    {\"run\": \"a\",\n     \"status\": \"sideways\"}]");
    claim.replace(claim.find("train.batchsize"), 15, "train.max_steps");
    const std::string status = refusal(claim);
    EXPECT_EQ(status.rfind("lesson.json:12: claims[0].status: unknown status", 0), 0u) << status;
    EXPECT_EQ(refusal("{\n  \"title\": \"t\",\n  oops\n}").rfind("lesson.json:3: invalid JSON", 0),
              0u);
}

// Saved runs drafted as a lesson (Save as lesson…): what they share is the base, what each
// sets of its own its run; the claims are what they measured; the draft reads back as a
// lesson.
TEST(Lessons, SavedRunsAreDraftedAsALessonThatReadsBack) {
    const auto run = [](std::int64_t id, const char* name, int batch, std::int64_t peak,
                        RunStatus status) {
        ExperimentConfig config;
        config.train.max_steps = 30;
        config.train.batch_size = batch;
        RunRecord record;
        record.id = id;
        record.name = name;
        record.config_json = config_to_json(config);
        record.outcome.status = status;
        record.outcome.peak_bytes = peak;
        return record;
    };
    const std::string text = lesson_from_runs({run(4, "small", 16, 100 << 20, RunStatus::Completed),
                                               run(7, "large", 128, 400 << 20, RunStatus::Oom)});
    const Lesson lesson = parse_lesson(text, "draft.json");
    EXPECT_EQ(lesson.title, "Runs #4, #7 as a lesson");
    ASSERT_EQ(lesson.base.size(), 1u);
    EXPECT_EQ(lesson.base[0], (std::pair<std::string, std::string>("train.max_steps", "30")));
    ASSERT_EQ(lesson.runs.size(), 2u);
    EXPECT_EQ(lesson.runs[1].label, "large");
    ASSERT_EQ(lesson.runs[1].settings.size(), 1u);
    EXPECT_EQ(lesson.runs[1].settings[0].second, "128");
    ASSERT_EQ(lesson.claims.size(), 2u);
    EXPECT_EQ(describe_claim(lesson.claims[0]), "large ends oom");
    EXPECT_EQ(describe_claim(lesson.claims[1]), "peak memory: small is at most 0.28 x large");
}

// A lesson is checked whole when it is loaded, so `lesson list` refuses it before any run is
// trained: each refusal names the file and where in it.
TEST(Lessons, ALessonIsCheckedWholeWhenLoaded) {
    const std::pair<std::string, std::string> cases[] = {
        {R"([{"metric": "activations", "smaller": "a", "than": "c"}])",
         "claims[0].than: no run is labelled \"c\"; the runs are \"a\", \"b\""},
        {R"([{"run": "z", "status": "oom"}])", "claims[0].run: no run is labelled \"z\""},
        {R"([{"run": "a", "status": "oom", "fragmented": "yes"}])",
         "claims[0].fragmented must be true or false, not \"yes\""},
        {R"([{"run": "a", "status": "oom", "after_steps": 2.5}])",
         "claims[0].after_steps must be a whole number of steps, 1 or more, not 2.5"},
        {R"([{"metric": "activations", "smaller": "a", "than": "b", "at_most": -0.5}])",
         "claims[0].at_most must be above 0, not -0.5"},
        {R"([{"metric": "activations", "smaller": "a", "than": "b", "at_most": "half"}])",
         "claims[0].at_most must be a number, not \"half\""},
        {R"([{"metric": "activations@block 9", "smaller": "a", "than": "b"}])",
         "claims[0]: run \"a\" has no module \"block 9\"; its modules are \"embeddings\""},
        {R"([{"largest": "activations", "run": "b", "module": "pooling"}])",
         "has no module \"pooling\""},
        {R"([{"metric": 5, "smaller": "a", "than": "b"}])",
         "claims[0].metric must be a text that is not empty, not 5"},
        {R"({"metric": "activations"})", "claims must be a list of claims"},
    };
    for (const auto& [claims, expected] : cases) {
        const std::string message = parse_error(claims);
        EXPECT_EQ(message.rfind("lesson.json:2: ", 0), 0u) << message;  // the claims' line
        EXPECT_NE(message.find(expected), std::string::npos) << claims << " gave: " << message;
    }
    const std::pair<std::string, std::string> files[] = {
        {R"({"title": "t", "explanation": "e", "processes": 2.7,
             "runs": [{"label": "a"}, {"label": "b"}]})",
         "lesson.json:1: processes must be a whole number from 1 to 8, not 2.7"},
        {R"({"title": "t", "explanation": "e", "runs": [{"label": "a"}, {"label": "a"}]})",
         "lesson.json:1: runs[1].label: two runs are labelled \"a\""},
        {R"({"title": "t", "explanation": "e", "runs": [{"label": "a"}, {"label": 3}]})",
         "lesson.json:1: runs[1].label must be a text that is not empty, not 3"},
        {R"({"title": 1, "explanation": "e", "runs": []})",
         "lesson.json:1: title must be a text that is not empty, not 1"},
        {R"({"title": "t", "explanation": "e", "runs": [{"label": "a"}]})",
         "lesson.json:1: runs must list at least two runs"},
        {R"([1, 2])", "lesson.json:1: a lesson is a JSON object, not array"},
        {R"({"title": "t", "explanation": "e", "runs": [{"label": "a"}, {"label": "b"}],
             "hide": ["model.kind", "train.batchsize"]})",
         "lesson.json:2: hide[1]: unknown config key \"train.batchsize\"; did you mean "
         "\"train.batch_size\"?"},
        {R"({"title": "t", "explanation": "e", "runs": [{"label": "a"}, {"label": "b"}],
             "lock": "train.batch_size"})",
         "lesson.json:2: lock must be a list of config keys"},
    };
    for (const auto& [json, expected] : files) {
        const std::string message = refusal(json);
        EXPECT_NE(message.find(expected), std::string::npos) << json << " gave: " << message;
    }
}

TEST(Lessons, ModuleMetricsReadTheRunsMemoryByModule) {
    RunRecord record;
    record.outcome.by_module = {{"block 1", 100, 100, 0, 5000}, {"head", 10, 0, 0, std::nullopt}};
    EXPECT_EQ(lesson_metric("activations@block 1", record, {}), 5000.0);
    EXPECT_EQ(lesson_metric("gradients@block 1", record, {}), 100.0);
    EXPECT_TRUE(std::isnan(lesson_metric("activations@head", record, {})));  // not measured
    EXPECT_TRUE(std::isnan(lesson_metric("activations@block 9", record, {})));
    LessonClaim largest;
    largest.kind = LessonClaim::Kind::Largest;
    largest.metric = "activations";
    largest.label = "plain";
    largest.module = "block 4";
    EXPECT_EQ(describe_claim(largest), "in plain, block 4 holds the most activations");
    LessonClaim late;
    late.kind = LessonClaim::Kind::Status;
    late.label = "default";
    late.status = RunStatus::Oom;
    late.fragmented = true;
    late.after_steps = 1;
    EXPECT_EQ(describe_claim(late), "default ends oom, fragmented after at least 1 step");
    // Said in words, never as the file's names (peak_bytes, optimizer_state).
    LessonClaim peak;
    peak.metric = "peak_bytes";
    peak.smaller = "frozen";
    peak.than = "trainable";
    EXPECT_EQ(describe_claim(peak), "peak memory: frozen is at most 1.00 x trainable");
    peak.metric = "optimizer_state";
    EXPECT_EQ(describe_claim(peak), "optimizer state: frozen is at most 1.00 x trainable");
    LessonClaim ratio;
    ratio.metric = "activations@block 1";
    ratio.smaller = "checkpointed";
    ratio.than = "plain";
    ratio.at_most = 0.2;
    EXPECT_EQ(describe_claim(ratio),
              "activations of block 1: checkpointed is at most 0.20 x plain");
}

// Two tiny runs that differ in the batch size, trained into a store in this process: the
// claims are checked against the stored runs, one that holds and one that does not.
TEST(Lessons, ALessonRunChecksItsClaimsAgainstTheStoredRuns) {
    const Lesson lesson = parse_lesson(R"({"title": "t", "explanation": "e",
        "base": {"train.max_steps": 2, "model.kind": "bag", "train.padding": "fixed",
                 "embeddings.source": "synthetic", "dataset.valid_ratio": 0.05},
        "runs": [{"label": "small", "set": {"train.batch_size": 4}},
                 {"label": "large", "set": {"train.batch_size": 64}}],
        "claims": [{"metric": "activations", "smaller": "small", "than": "large",
                    "at_most": 0.5},
                   {"metric": "activations", "smaller": "large", "than": "small",
                    "at_most": 0.5},
                   {"run": "large", "status": "completed"}]})",
                                       "tiny.json");
    test::TempDir dir;
    RunStore store = RunStore::open(dir.file("runs.sqlite"));
    RunListener listener;
    const std::atomic<bool> cancel{false};
    const LessonResult result = run_lesson(lesson, store, listener, cancel);
    ASSERT_EQ(result.runs.size(), 2u);
    for (const LessonRunResult& run : result.runs) {
        EXPECT_EQ(run.record.outcome.status, RunStatus::Completed) << run.record.outcome.error;
        EXPECT_EQ(store.find_run(run.record.id)->name, run.record.name);
        EXPECT_FALSE(run.metrics.empty());
    }
    const double small =
        lesson_metric("activations", result.runs[0].record, result.runs[0].metrics);
    const double large =
        lesson_metric("activations", result.runs[1].record, result.runs[1].metrics);
    EXPECT_LT(small, large);
    ASSERT_EQ(result.checks.size(), 3u);
    EXPECT_EQ(result.checks[0].holds, small <= 0.5 * large) << result.checks[0].description;
    EXPECT_FALSE(result.checks[1].holds) << result.checks[1].description;
    EXPECT_TRUE(result.checks[2].holds) << result.checks[2].description;
    EXPECT_FALSE(result.all_hold());
}

}  // namespace
}  // namespace oomlab
