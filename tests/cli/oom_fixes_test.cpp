// Every fix the engine offers after an out-of-memory run, applied through the CLI, completes
// under the memory the fixed run has: the advice is tested, not assumed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "grid_sample.h"
#include "oomlab/config/config_io.h"
#include "oomlab/lessons/lesson.h"
#include "test_support.h"

namespace oomlab {
namespace {

using nlohmann::json;
using test::run_cli;

using Args = std::vector<std::string>;

// Which of a run's fixes a test trains: those whose place i has i % count == part.
struct FixesPart {
    std::size_t part = 0;
    std::size_t count = 1;
};

class OfferedFixes : public ::testing::Test {
protected:
    // Runs `settings` (of `configured_steps` optimizer steps, 0 for whole epochs) with
    // --try-fixes: when it ends out of memory, every offered fix is trained in the same
    // process, and each must complete with its peak under its cap. Returns whether the run
    // ran out of memory.
    bool every_fix_completes(const std::string& name, const Args& settings,
                             std::int64_t configured_steps) {
        Args run{"run", "--db", m_dir.file("runs.sqlite"), "--json", "--try-fixes"};
        run.insert(run.end(), settings.begin(), settings.end());
        const auto ran = run_cli(run);
        std::vector<json> summaries;  // the run's, then each try's
        json tries;
        for (const std::string& line : ran.lines()) {
            const json parsed = json::parse(line);
            if (!parsed.contains("type")) {
                summaries.push_back(parsed);
            } else if (parsed["type"] == "tries") {
                tries = parsed;
            }
        }
        if (ran.exit_code != 3) {
            EXPECT_EQ(ran.exit_code, 0) << name << ": " << ran.err;
            EXPECT_TRUE(tries.is_null()) << name << ": a run that completed has nothing to try";
            return false;
        }
        const json& failed = summaries.front();
        EXPECT_EQ(failed["status"], "oom") << name;
        EXPECT_FALSE(failed["fixes"].empty()) << name << ": no fix offered";
        EXPECT_EQ(tries["run_id"], failed["run_id"]) << name << ": the last line is the tries";
        EXPECT_EQ(json::parse(ran.lines().back()), tries) << name;
        EXPECT_EQ(summaries.size(), failed["fixes"].size() + 1) << name << ": " << ran.err;
        // A fix is run past the step at which the run failed, by three steps more (its peak
        // reached again and again), not through a whole lesson: a leak that fails at step k
        // is still checked at k, and the suite does not train each fix for minutes.
        const std::int64_t past_the_failure = failed["steps"].get<std::int64_t>() + 4;
        const std::int64_t steps =
            configured_steps == 0 ? past_the_failure : std::min(configured_steps, past_the_failure);
        for (std::size_t i = 0; i < failed["fixes"].size() && i + 1 < summaries.size(); ++i) {
            const json& fix = failed["fixes"][i];
            const json& done = summaries[i + 1];
            const json& tried = tries["tries"][i];
            EXPECT_EQ(tried["set"], fix["set"]) << name;
            EXPECT_EQ(tried["run_id"], done["run_id"]) << name;
            EXPECT_EQ(tried["peak_bytes"], done["peak_bytes"]) << name;
            EXPECT_EQ(done["steps"], steps) << name << " with " << fix["set"].dump();
            expect_completed_as_predicted(name, fix, done, failed);
        }
        expect_tried_fixes_shown(name, failed, failed["fixes"].size());
        return true;
    }

    // The same, each fix a process of its own that says which run it is a fix of (--fix-of),
    // only the fixes of `part`.
    bool every_fix_completes_run_by_run(const std::string& name, const Args& settings,
                                        std::int64_t configured_steps,
                                        FixesPart part = FixesPart{}) {
        Args run{"run", "--db", m_dir.file("runs.sqlite"), "--json"};
        run.insert(run.end(), settings.begin(), settings.end());
        const auto failed = run_cli(run);
        if (failed.exit_code != 3) {
            EXPECT_EQ(failed.exit_code, 0) << name << ": " << failed.err;
            return false;
        }
        const json summary = json::parse(failed.lines().back());
        EXPECT_EQ(summary["status"], "oom") << name;
        EXPECT_FALSE(summary["fixes"].empty()) << name << ": no fix offered";
        const std::string failed_id = std::to_string(summary["run_id"].get<std::int64_t>());
        Args fixed_run = run;
        const std::int64_t past_the_failure = summary["steps"].get<std::int64_t>() + 4;
        if (configured_steps == 0 || configured_steps > past_the_failure) {
            fixed_run.insert(fixed_run.end(),
                             {"--set", "train.max_steps=" + std::to_string(past_the_failure)});
        }
        std::size_t tried = 0;
        for (std::size_t i = part.part; i < summary["fixes"].size(); i += part.count) {
            const json& fix = summary["fixes"][i];
            ++tried;
            const auto result = run_cli(with_fix(fixed_run, fix, failed_id));
            EXPECT_EQ(result.exit_code, 0)
                << name << " with " << fix["set"].dump() << ": " << result.err << result.out;
            if (result.exit_code == 0) {
                expect_completed_as_predicted(name, fix, json::parse(result.lines().back()),
                                              summary);
            }
        }
        expect_tried_fixes_shown(name, summary, tried);
        return true;
    }

    // The command `run` again as a try of `fix` for run `failed_id` (--fix-of), its settings last.
    static Args with_fix(Args run, const json& fix, const std::string& failed_id) {
        run.insert(run.end(), {"--fix-of", failed_id});
        for (const auto& [key, value] : fix["set"].items()) {
            run.insert(run.end(), {"--set", key + "=" + value.get<std::string>()});
        }
        return run;
    }

    // `done`, the run that tried `fix` of `failed`, completed within the prediction.
    void expect_completed_as_predicted(const std::string& name, const json& fix, const json& done,
                                       const json& failed) {
        m_offered.push_back(fix["set"]);
        EXPECT_EQ(done["status"], "completed") << name << " with " << fix["set"].dump();
        // The run's own cap bounds its tensors (the engine refuses past it); the
        // prediction it was offered with must hold too, within the 5% it keeps free.
        EXPECT_LE(done["peak_bytes"].get<double>(),
                  fix["predicted_peak_bytes"].get<double>() * 1.05 + (1 << 20))
            << name << " with " << fix["set"].dump();
        EXPECT_EQ(done["fix_of"], failed["run_id"]);
        ++m_fixes;
    }

    // The fixes stay with the run, and each of the `tried` runs that tried one is shown beside
    // it with what it measured against the prediction.
    void expect_tried_fixes_shown(const std::string& name, const json& failed,
                                  std::size_t tried_runs) {
        const std::string failed_id = std::to_string(failed["run_id"].get<std::int64_t>());
        EXPECT_EQ(test::show_run_json(m_dir.file("runs.sqlite"), std::stoll(failed_id))["fixes"],
                  failed["fixes"])
            << name;
        const auto shown = run_cli({"runs", "show", failed_id, "--db", m_dir.file("runs.sqlite")});
        std::size_t tried = 0;
        for (std::size_t at = 0; (at = shown.out.find("  tried in run ", at)) != std::string::npos;
             ++at) {
            ++tried;
        }
        EXPECT_EQ(tried, tried_runs) << shown.out;
        EXPECT_EQ(shown.out.find(" -> measured ") != std::string::npos, tried_runs > 0)
            << shown.out;
    }

    test::TempDir m_dir;
    int m_fixes = 0;
    std::vector<json> m_offered;  // the settings of every fix offered
};

// The CPU as a GPU in miniature (memory.alloc_conf): under a cap, the modelled caching
// allocator's 20 MiB segments leave more cached and free than the request, in pieces no
// larger than half of it. The run is called fragmentation, expandable segments come first
// among its fixes, and with them the same run completes with its cache in the breakdown.
// Only that fix is trained here: every fix of a fragmented run is, in the fragmentation
// lesson's LessonFixes case (its bf16 fix alone took 26 s of this test's 42).
TEST_F(OfferedFixes, AFragmentedCpuRunIsCalledSoAndExpandableSegmentsComplete) {
    const std::string db = m_dir.file("runs.sqlite");
    Args run{"run", "--db", db, "--json"};
    for (const char* setting : {"memory.alloc_conf=backend:native", "model.kind=transformer",
                                "train.batch_size=128", "memory.cap_mb=210", "train.max_steps=3"}) {
        run.insert(run.end(), {"--set", setting});
    }
    const auto ran = run_cli(run);
    ASSERT_EQ(ran.exit_code, 3) << ran.err;
    const json summary = json::parse(ran.lines().back());
    const json failed = test::show_run_json(db, 1);
    const json& free_space = failed["fragmentation"];
    ASSERT_TRUE(free_space.is_object()) << failed.dump();
    EXPECT_TRUE(free_space["fragmented"].get<bool>()) << free_space.dump();
    EXPECT_GT(free_space["reserved_free_bytes"].get<std::int64_t>(),
              free_space["requested_bytes"].get<std::int64_t>());
    EXPECT_LT(free_space["largest_free_block"].get<std::int64_t>(),
              free_space["requested_bytes"].get<std::int64_t>());
    EXPECT_NE(failed["error"].get<std::string>().find("reserved but unallocated"),
              std::string::npos);
    // The cheapest fix, offered first: the same settings with expandable segments.
    ASSERT_FALSE(summary["fixes"].empty());
    const json& cheapest = summary["fixes"].front();
    ASSERT_EQ(cheapest["set"], json({{"memory.alloc_conf", "expandable_segments:True"}}));
    const auto tried = run_cli(with_fix(run, cheapest, "1"));
    ASSERT_EQ(tried.exit_code, 0) << tried.err;
    expect_completed_as_predicted("fragmented", cheapest, json::parse(tried.lines().back()),
                                  summary);
    const json expandable = test::show_run_json(db, 2);
    EXPECT_EQ(expandable["steps"], 3);
    EXPECT_GT(expandable["breakdown"]["allocator_cache"].get<std::int64_t>(), 0);
}

// The lesson runs meant to run out of memory (their lesson claims it), as "lesson/run" and
// their settings.
std::vector<std::pair<std::string, ExperimentConfig>> lesson_runs_meant_to_fail() {
    std::vector<std::pair<std::string, ExperimentConfig>> meant_to_fail;
    for (const Lesson& lesson : load_lessons(lessons_folder())) {
        for (const LessonRun& run : lesson.runs) {
            bool claims_oom = false;
            for (const LessonClaim& claim : lesson.claims) {
                claims_oom |= claim.label == run.label && claim.status == RunStatus::Oom;
            }
            if (claims_oom) {
                meant_to_fail.emplace_back(lesson.name + "/" + run.label,
                                           lesson_config(lesson, run));
            }
        }
    }
    return meant_to_fail;
}

TEST(LessonFixes, SomeLessonRunsAreMeantToRunOutOfMemory) {
    EXPECT_GE(lesson_runs_meant_to_fail().size(), 2u);
}

// How many tests share the fixes of one lesson run: the fragmentation lesson's six took 45 s
// in one test on the slow machine, and a test of its own sees only its part.
constexpr std::size_t kPartsOfALessonRun = 2;

// A part of a lesson run's fixes: the run's name and which part.
struct LessonRunPart {
    std::string run;
    std::size_t part = 0;
};

void PrintTo(const LessonRunPart& cell, std::ostream* out) {
    *out << cell.run << ", part " << cell.part + 1;
}

// Each part of each of those runs (the runs sampled as a grid is: grid_sample.h).
std::vector<LessonRunPart> lesson_run_parts() {
    std::vector<std::string> names;
    for (const auto& [name, settings] : lesson_runs_meant_to_fail()) {
        names.push_back(name);
    }
    std::vector<LessonRunPart> parts;
    for (const std::string& name : test::grid_sample(names)) {
        for (std::size_t part = 0; part < kPartsOfALessonRun; ++part) {
            parts.push_back({name, part});
        }
    }
    return parts;
}

// A test per part of each lesson run, so that the suite runs them side by side; whole lessons
// (30 steps or more), some of them in the build that samples grids. Each part runs the lesson
// run again and its own fixes, each a process of its own (--fix-of).
class LessonFixes : public OfferedFixes, public ::testing::WithParamInterface<LessonRunPart> {};

TEST_P(LessonFixes, EveryFixCompletes) {
    const LessonRunPart& part = GetParam();
    for (const auto& [run, settings] : lesson_runs_meant_to_fail()) {
        if (run == part.run) {
            const std::string config = m_dir.file("lesson-run.json");
            test::write_file(config, config_to_json(settings));
            EXPECT_TRUE(every_fix_completes_run_by_run(run, {"--config", config},
                                                       settings.train.max_steps,
                                                       {part.part, kPartsOfALessonRun}))
                << run << " did not run out of memory, as its lesson says it does";
            std::cout << "[ note ] " << run << ": " << m_fixes << " fixes applied\n";
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Lessons, LessonFixes, ::testing::ValuesIn(lesson_run_parts()),
                         [](const ::testing::TestParamInfo<LessonRunPart>& cell) {
                             std::string name = cell.param.run;
                             std::replace_if(
                                 name.begin(), name.end(),
                                 [](char c) {
                                     return std::isalnum(static_cast<unsigned char>(c)) == 0;
                                 },
                                 '_');
                             return name + "_" + std::to_string(cell.param.part + 1) + "_of_" +
                                    std::to_string(kPartsOfALessonRun);
                         });

// Two processes: the fixes are for one rank's memory, sharding among them, and none that
// several processes refuse (sparse gradients).
TEST_F(OfferedFixes, EveryFixForATwoProcessRunCompletesAndShardingIsOffered) {
    EXPECT_TRUE(every_fix_completes_run_by_run(
        "2 processes", {"--nproc", "2", "--set", "train.max_steps=2", "--set", "memory.cap_mb=12"},
        2));
    const auto offered = [&](const json& set) {
        return std::find(m_offered.begin(), m_offered.end(), set) != m_offered.end();
    };
    EXPECT_TRUE(offered({{"distributed.shard", "optimizer"}})) << json(m_offered).dump();
    // In buckets smaller than a quarter of a process's gradients: a bucket of all of them
    // would wait whole until the end of backward and give ZeRO-2's saving back.
    EXPECT_TRUE(offered({{"distributed.shard", "gradients"}, {"distributed.bucket_mb", "1"}}))
        << json(m_offered).dump();
}

struct CappedConfig {
    std::string model;
    int batch;
    int cap_mb;
    std::vector<std::string> extra;  // more settings
};

void PrintTo(const CappedConfig& run, std::ostream* out) {
    *out << run.model << " b" << run.batch << " cap " << run.cap_mb << " MiB";
    for (const std::string& setting : run.extra) {
        *out << " " << setting;
    }
}

class CappedRunFixes : public OfferedFixes, public ::testing::WithParamInterface<CappedConfig> {};

// Each of these runs out of memory, and every fix offered for it completes. Each cell is at
// the smallest batch and cap that still get the fixes its larger self got (a bilstm of batch
// 512 under 60 MiB and one of batch 128 under 16 MiB are offered the same three).
TEST_P(CappedRunFixes, EveryFixCompletes) {
    const CappedConfig& c = GetParam();
    // Two steps reach the peak: the second holds the optimizer state the first created.
    Args settings{"--set", "train.max_steps=2",
                  "--set", "model.kind=" + c.model,
                  "--set", "train.batch_size=" + std::to_string(c.batch),
                  "--set", "memory.cap_mb=" + std::to_string(c.cap_mb)};
    for (const std::string& setting : c.extra) {
        settings.insert(settings.end(), {"--set", setting});
    }
    EXPECT_TRUE(every_fix_completes(c.model, settings, 2))
        << "it no longer runs out of memory: lower its cap";
    std::cout << "[ note ] " << m_fixes << " fixes applied\n";
}

std::string grid_name(const ::testing::TestParamInfo<CappedConfig>& info) {
    std::string name = info.param.model + "_b" + std::to_string(info.param.batch) + "_cap" +
                       std::to_string(info.param.cap_mb);
    for (const std::string& setting : info.param.extra) {
        name += '_';
        for (const char c : setting) {
            name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
        }
    }
    return name;
}

INSTANTIATE_TEST_SUITE_P(
    Grid, CappedRunFixes,
    ::testing::ValuesIn(test::grid_sample(std::vector<CappedConfig>{
        CappedConfig{"transformer", 256, 50, {}},
        // bf16 at a shorter length, a smaller batch and half the width (test::kBf16Batch
        // says why): the same fixes as a batch of 128 under 40 MiB at full width (5.5 s of
        // one thread, against 16.6 s at full width under 20 MiB).
        CappedConfig{
            "transformer", 96, 18,
            test::half_width("transformer", {"memory.precision=bf16", "train.max_len=24"})},
        CappedConfig{"transformer", 64, 24, {"memory.checkpointing=layers"}},
        CappedConfig{"transformer", 256, 80, {"train.optimizer=sgd"}},
        CappedConfig{"transformer", 32, 16, {"model.ffn=1024"}},
        CappedConfig{"bilstm", 256, 30, {}},
        // Offered only a larger cap, as a batch of 128 under 20 MiB at full width was (2.9 s
        // of one thread; 8.4 s at full width).
        CappedConfig{"bilstm", 32, 6,
                     test::half_width("bilstm", {"memory.precision=bf16", "train.max_len=24"})},
        CappedConfig{"bilstm", 128, 16, {"train.optimizer=sgd"}},
        CappedConfig{"bilstm", 32, 10, {"model.hidden=256"}}, CappedConfig{"bag", 512, 8, {}},
        CappedConfig{"bag", 256, 6, {"embeddings.trainable=false"}},
        CappedConfig{"bag", 1024, 12, {"train.optimizer=sgd"}}})),
    grid_name);

}  // namespace
}  // namespace oomlab
