// oomlab-cli lesson list|run NAME|run FILE.json|check FILE.json
#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "cli_context.h"
#include "oomlab/common/text_table.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/lessons/class_predictions.h"
#include "oomlab/lessons/lesson.h"
#include "oomlab/lessons/lesson_prediction.h"
#include "oomlab/run/run_json.h"
#include "oomlab/trackers/mlflow_live.h"
#include "oomlab/trackers/served_file.h"
#include "tracker_export.h"

namespace oomlab::cli {
namespace {

class ProgressDots final : public RunListener {
public:
    // Where the student predicted, each run keeps the lesson, its place in it and the
    // `prediction` (a tracker gets them with the run, now or sent again later). With --mlflow:
    // each run goes to the class's server while it trains.
    ProgressDots(bool quiet, const Lesson& lesson, const TrackerTargets& targets,
                 const std::optional<LessonAnswer>& prediction, RunStore& store, std::string db)
        : m_quiet(quiet),
          m_lesson(lesson),
          m_targets(targets),
          m_prediction(prediction),
          m_store(store),
          m_db(std::move(db)) {}

    void on_run_created(std::int64_t run_id, const ExperimentInfo&) override {
        if (!m_quiet) {
            std::cout << "  run " << run_id << " ..." << std::endl;
        }
        if (m_prediction && m_created < m_lesson.runs.size()) {
            m_store.set_tracker_tags(run_id, lesson_tags(m_lesson, m_created, *m_prediction));
        }
        ++m_created;
        if (!m_targets.mlflow_uri.empty()) {
            auto live = std::make_unique<trackers::MlflowLiveRun>(mlflow_target(m_targets), m_db,
                                                                  m_targets.send_every());
            live->start(run_id);
            m_live.push_back(std::move(live));
        }
    }

    // The lesson has ended: each run is sent whole, going on in what was sent while it trained.
    void send_ends(const RunStore& store, const LessonResult& result, bool json) {
        for (std::size_t i = 0; i < result.runs.size() && !m_targets.empty(); ++i) {
            std::optional<trackers::MlflowSentWhileTraining> sent;
            const std::int64_t run_id = result.runs[i].record.id;
            if (i < m_live.size()) {
                sent = m_live[i]->finish();
                if (const std::string problem = m_live[i]->problem(); !problem.empty()) {
                    std::cerr << "warning: run " << run_id << " was not sent to MLflow while it "
                              << "trained: " << problem << "\n  it is sent now\n";
                }
            }
            mirror_run(store, run_id, m_targets, json, sent);
        }
    }

private:
    bool m_quiet;
    const Lesson& m_lesson;
    TrackerTargets m_targets;
    std::optional<LessonAnswer> m_prediction;
    RunStore& m_store;  // where the runs train: their tags written as each is made
    std::size_t m_created = 0;
    std::string m_db;
    std::vector<std::unique_ptr<trackers::MlflowLiveRun>> m_live;  // in the lesson's order
};

// The student's prediction beside what the runs measured.
void print_prediction(const Lesson& lesson, const LessonAnswer& predicted,
                      const LessonResult& result) {
    const LessonAsks asks = lesson_asks(lesson);
    std::vector<LessonRunFacts> facts;
    for (const auto& run : result.runs) {
        const RunOutcome& outcome = run.record.outcome;
        facts.push_back({outcome.peak_bytes, outcome.status,
                         outcome.fragmentation && outcome.fragmentation->fragmented()});
    }
    std::cout << "\n  you predicted: " << answer_text(asks, predicted) << '\n';
    if (facts.size() != asks.labels.size()) {
        std::cout << "  measured:      nothing (the lesson stopped before its last run)\n";
        return;
    }
    const LessonAnswer measured = measured_answer(asks, facts);
    std::cout << "  measured:      " << answer_text(asks, measured) << "\n  your prediction was "
              << (agrees(predicted, measured) ? "right" : "off") << '\n';
}

// The layers' activations and the steps' temporaries (the loss, the update) apart, where the
// allocator told modules apart; else both together under activations.
std::pair<std::string, std::string> activations_and_temporaries(const RunOutcome& outcome) {
    const bool by_module =
        !outcome.by_module.empty() &&
        std::all_of(outcome.by_module.begin(), outcome.by_module.end(),
                    [](const ModuleMemory& module) { return module.activations.has_value(); });
    if (!by_module) {
        return {format_bytes(outcome.breakdown.activations), "-"};
    }
    std::int64_t activations = 0;
    std::int64_t temporaries = 0;
    for (const ModuleMemory& module : outcome.by_module) {
        activations += module.layer_activations();
        temporaries += module.temporaries();
    }
    return {format_bytes(activations), format_bytes(temporaries)};
}

void print_result(const Lesson& lesson, const LessonResult& result) {
    std::cout << "\n" << lesson.title << "\n\n" << lesson.explanation << "\n\n";
    TextTable table(
        {"run", "status", "peak", "activations", "temporaries", "gradients", "optimizer", "table"},
        {2, 3, 4, 5, 6, 7});
    for (const auto& run : result.runs) {
        const RunOutcome& outcome = run.record.outcome;
        const MemoryBreakdown& b = outcome.breakdown;
        const auto [activations, temporaries] = activations_and_temporaries(outcome);
        table.add_row({run.run.label, std::string(run_status_name(outcome.status)),
                       format_bytes(outcome.peak_bytes), activations, temporaries,
                       format_bytes(b.gradients), format_bytes(b.optimizer_state),
                       format_bytes(b.embedding_table)});
    }
    table.print(std::cout);
    std::cout << '\n';
    if (!result.device_note.empty()) {
        std::cout << "  on this device: " << result.device_note << "\n\n";
    }
    for (const auto& check : result.checks) {
        std::cout << (check.holds ? "  shown:     " : "  NOT shown: ") << check.description << '\n';
    }
}

}  // namespace

void add_lesson_command(CLI::App& app, int& exit_code) {
    auto* lesson = app.add_subcommand("lesson", "Guided lessons: runs that each show one effect");
    lesson->require_subcommand(1);
    auto json = std::make_shared<bool>(false);
    auto* list = lesson->add_subcommand("list", "The lessons");
    list->add_flag("--json", *json, "One JSON object per lesson");
    list->callback([json, &exit_code] {
        TextTable table({"", ""});
        std::vector<BrokenLesson> broken;
        for (const auto& item : load_lessons(lessons_folder(), &broken)) {
            if (*json) {
                std::cout << json_line(nlohmann::ordered_json{{"name", item.name},
                                                              {"title", item.title},
                                                              {"runs", item.runs.size()}})
                          << '\n';
            } else {
                table.add_row({item.name, item.title});
            }
        }
        table.print(std::cout);
        // A file that does not read is named, with why; the others are listed and run.
        for (const BrokenLesson& item : broken) {
            if (*json) {
                std::cout << json_line(nlohmann::ordered_json{{"name", item.name},
                                                              {"not_read", item.why}})
                          << '\n';
            } else {
                std::cerr << "lesson " << item.name << " is not listed: " << item.why << '\n';
            }
        }
        exit_code = kExitOk;
    });
    auto* run = lesson->add_subcommand("run", "Run a lesson and compare what it measured");
    auto name = std::make_shared<std::string>();
    auto db = std::make_shared<std::string>(default_db_path());
    run->add_option("NAME", *name,
                    "A lesson's name (see `lesson list`), a lesson file (FILE.json, "
                    "docs/workbench.md describes the format), or the http:// or https:// "
                    "address of one a lecturer serves")
        ->required();
    run->add_option("--db", *db, "Run database (SQLite)")->capture_default_str();
    run->add_flag("--json", *json, "JSON lines: each run's summary, then the checks");
    auto overrides = std::make_shared<std::vector<std::string>>();
    run->add_option("--set", *overrides,
                    "A setting over the lesson's own (KEY=VALUE, repeatable), e.g. "
                    "train.max_steps=5 or device=cuda; each run's own settings still apply over "
                    "it, so what the lesson contrasts stays")
        ->type_name("KEY=VALUE");
    auto targets = std::make_shared<TrackerTargets>();
    targets->add_run_options(*run);
    auto predict = std::make_shared<std::string>();
    run->add_option("--predict", *predict,
                    "Your prediction before the runs train, sent with them to --mlflow for the "
                    "class's count: the run that needs the most and by how much (\"batch "
                    "128,over-3x\"; \"same,under-1.5x\"), or the run that alone completes "
                    "(\"every\", \"none\"; and \",full\" or \",pieces\" where asked)")
        ->type_name("ANSWER");
    run->callback([=, &exit_code] {
        refuse_process_group("lesson run");
        Lesson chosen = trackers::is_http_url(*name)
                            ? parse_lesson(trackers::fetch_served_file(*name), *name)
                            : find_or_load_lesson(*name);
        ExperimentConfig checked;  // each refused, naming the key, before anything trains
        for (const std::string& assignment : *overrides) {
            apply_config_override(checked, assignment);
            const std::size_t equals = assignment.find('=');
            chosen.base.emplace_back(assignment.substr(0, equals), assignment.substr(equals + 1));
        }
        targets->check();
        std::optional<LessonAnswer> predicted;
        if (!predict->empty()) {
            predicted = parse_answer(lesson_asks(chosen), *predict, "--predict");
        }
        RunStore store = RunStore::open(*db);
        ProgressDots listener(*json, chosen, *targets, predicted, store, *db);
        const StopOnSignals stop;
        const LessonResult result = run_lesson(chosen, store, listener, stop.requested());
        listener.send_ends(store, result, *json);
        if (*json) {
            for (const auto& item : result.runs) {
                std::cout << run_summary_json(item.record) << '\n';
            }
            nlohmann::ordered_json checks = nlohmann::ordered_json::array();
            for (const auto& check : result.checks) {
                checks.push_back({{"description", check.description}, {"holds", check.holds}});
            }
            std::cout << json_line(nlohmann::ordered_json{{"lesson", chosen.name},
                                                          {"shown", result.all_hold()},
                                                          {"device_note", result.device_note},
                                                          {"checks", checks}})
                      << '\n';
        } else {
            print_result(chosen, result);
            if (predicted) {
                print_prediction(chosen, *predicted, result);
            }
        }
        const bool stopped = !result.runs.empty() &&
                             result.runs.back().record.outcome.status == RunStatus::Cancelled;
        exit_code = stopped ? kExitInterrupted : (result.all_hold() ? kExitOk : kExitFailure);
    });
    auto* check = lesson->add_subcommand(
        "check", "Check a lesson file without training: its settings, runs and claims");
    auto file = std::make_shared<std::string>();
    check->add_option("FILE", *file, "The lesson file (FILE.json)")->required();
    check->callback([file, &exit_code] {
        const Lesson checked = load_lesson_file(*file);
        std::cout << *file << ": a lesson of " << checked.runs.size() << " runs and "
                  << checked.claims.size() << (checked.claims.size() == 1 ? " claim" : " claims")
                  << ": " << checked.title << '\n';
        for (const LessonClaim& claim : checked.claims) {
            std::cout << "  claims: " << describe_claim(claim) << '\n';
        }
        exit_code = kExitOk;
    });
}

}  // namespace oomlab::cli
