// oomlab-cli run: one recorded run, with progress on the terminal.
#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "cli_context.h"
#include "fix_tries.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/utf8.h"
#include "oomlab/launch/rendezvous.h"
#include "oomlab/run/run_json.h"
#include "oomlab/session/experiment.h"
#include "oomlab/session/pace.h"
#include "oomlab/session/run_session.h"
#include "oomlab/store/run_store.h"
#include "oomlab/trackers/mlflow_live.h"
#include "tracker_export.h"

namespace oomlab::cli {
namespace {

// Prints progress about once a second: text for people, JSON lines with --json.
class TerminalListener final : public RunListener {
public:
    TerminalListener(bool json, Pace pace)
        : m_json(json), m_pause_ms(oomlab::step_pause_ms(pace)) {}

    int step_pause_ms() const override { return m_pause_ms; }

    // Sent to MLflow while it trains (--mlflow): begun when the run has its row.
    void send_while_training(trackers::MlflowLiveRun* live) { m_live = live; }

    void on_run_created(std::int64_t run_id, const ExperimentInfo& info) override {
        if (m_live) {
            m_live->start(run_id);
        }
        // Known before the first step reports its progress (of this run: --try-fixes trains
        // several).
        m_progress = TrainProgress{};
        m_progress.total_steps = info.total_steps;
        m_last_print_ms = -1e9;
        if (m_json) {
            nlohmann::ordered_json line = {{"type", "start"},
                                           {"run_id", run_id},
                                           {"device", info.device},
                                           {"dataset", info.dataset},
                                           {"embeddings", info.embeddings},
                                           {"train_examples", info.train_examples},
                                           {"valid_examples", info.valid_examples},
                                           {"vocab_size", info.vocab_size},
                                           {"parameters", info.parameters},
                                           {"total_steps", info.total_steps}};
            std::cout << json_line(line) << std::endl;
            return;
        }
        std::cout << "run " << run_id << " on " << info.device << "\n"
                  << "  data:    " << info.dataset << " (" << info.train_examples << " train, "
                  << info.valid_examples << " validation, " << info.label_names.size()
                  << " labels)\n"
                  << "  vectors: " << info.embeddings << "\n"
                  << "  table:   " << info.vocab_size << " rows x " << info.embedding_dim << " ("
                  << info.vectors_found << " of " << info.dataset_words
                  << " dataset words have a vector)\n"
                  << "  model:   " << info.parameters << " parameters ("
                  << info.trainable_parameters << " trainable), " << info.total_steps << " steps\n";
    }

    // Progress is printed from the step rows as they are saved, so every figure shown is one
    // the database holds: about once a second, and for the last step.
    void on_metrics(const std::vector<MetricRow>& rows) override {
        const MetricRow* last = nullptr;
        for (const auto& row : rows) {
            if (row.phase == phase::kStep) {
                last = &row;
            }
        }
        if (!last) {
            return;
        }
        const bool final_step = last->step >= m_progress.total_steps;
        if (last->wall_ms - m_last_print_ms < 1000.0 && !final_step) {
            return;
        }
        m_last_print_ms = last->wall_ms;
        print_progress(*last);
    }

    void on_event(const EventRow& event) override {
        if (m_json) {
            nlohmann::ordered_json line = {{"type", "event"},
                                           {"step", event.step},
                                           {"kind", event.kind},
                                           {"message", event.message}};
            std::cout << json_line(line) << std::endl;
        } else {
            std::cout << "  [" << event.kind << "] step " << event.step << ": " << event.message
                      << std::endl;
        }
    }

    void on_progress(const TrainProgress& progress) override { m_progress = progress; }

private:
    trackers::MlflowLiveRun* m_live = nullptr;

    void print_progress(const MetricRow& row) {
        const double eta = m_progress.step > 0 ? m_progress.eta_seconds : -1;
        if (m_json) {
            nlohmann::ordered_json line = {
                {"type", "progress"},
                {"step", row.step},
                {"total_steps", m_progress.total_steps},
                {"epoch", m_progress.epoch},
                {"loss", row.loss ? nlohmann::ordered_json(*row.loss) : nullptr},
                {"step_peak_bytes",
                 row.peak_bytes ? nlohmann::ordered_json(*row.peak_bytes) : nullptr},
                {"elapsed_seconds", row.wall_ms / 1000.0},
                {"eta_seconds", eta}};
            std::cout << json_line(line) << std::endl;
            return;
        }
        char loss[32] = "-";
        if (row.loss) {
            std::snprintf(loss, sizeof loss, "%.4f", *row.loss);
        }
        std::cout << "  step " << row.step << "/" << m_progress.total_steps << "  epoch "
                  << m_progress.epoch << "  loss " << loss << "  step peak "
                  << (row.peak_bytes ? format_bytes(*row.peak_bytes) : "-") << "  ETA "
                  << format_duration(eta) << std::endl;
    }

    bool m_json;
    int m_pause_ms;
    double m_last_print_ms = -1e9;
    TrainProgress m_progress;
};

// The ranks past 0 say nothing while they train; they keep the pace too.
class PacedListener final : public RunListener {
public:
    explicit PacedListener(Pace pace) : m_pause_ms(oomlab::step_pause_ms(pace)) {}
    int step_pause_ms() const override { return m_pause_ms; }

private:
    int m_pause_ms;
};

// `tried_next`: the fixes are tried right after it (--try-fixes), so no hint how to try one.
void print_summary(const RunRecord& run, const std::vector<OomFix>& fixes, bool json,
                   bool tried_next = false) {
    const RunOutcome& outcome = run.outcome;
    if (json) {
        auto summary = nlohmann::ordered_json::parse(run_summary_json(run));
        if (outcome.status == RunStatus::Oom) {
            summary["fixes"] = nlohmann::ordered_json::parse(oom_fixes_json(fixes));
        }
        std::cout << json_line(summary) << std::endl;
        return;
    }
    std::cout << "run " << run.id << " " << run_status_name(outcome.status) << " after "
              << outcome.steps << " steps in " << format_duration(outcome.wall_seconds) << '\n';
    if (!outcome.time_by_part.empty()) {
        std::cout << "  time by part        ";
        for (const PartTime& part : outcome.time_by_part) {
            char seconds[32];
            std::snprintf(seconds, sizeof seconds, " %.2f s", part.seconds);
            std::cout << ' ' << part.part << seconds;
        }
        std::cout << '\n';
    }
    if (outcome.final_train_loss) {
        std::cout << "  final train loss     " << *outcome.final_train_loss << '\n';
    }
    if (outcome.val_accuracy) {
        std::cout << "  validation accuracy  " << *outcome.val_accuracy * 100 << " %\n";
    }
    print_breakdown(outcome);
    print_ranks(run);
    if (!outcome.error.empty()) {
        std::cout << "  " << outcome.error << '\n';
    }
    if (outcome.status == RunStatus::Oom) {
        print_fixes(fixes);
        if (!fixes.empty() && !tried_next) {
            std::cout << "  (run one with --fix-of " << run.id << " to follow it in `runs show "
                      << run.id << "`)\n";
        }
    }
}

// The settings `build` makes. A rank of a group that refuses them tells the other ranks,
// which would otherwise wait distributed.timeout_s for it.
ExperimentConfig refused_or_built(const std::function<ExperimentConfig()>& build) {
    try {
        return build();
    } catch (const BadInput& error) {
        std::optional<Rendezvous> group;
        try {
            group = rendezvous_from_environment();
        } catch (const BadInput&) {
            // Without a rendezvous there is no one to tell.
        }
        if (group) {
            refuse_to_join(*group, error.what(),
                           std::chrono::seconds(ExperimentConfig().distributed.timeout_s));
        }
        throw;
    }
}

// --try-fixes trains the fixes in this process, one after the other: not a run of several
// processes (each fix is then a run of its own, --fix-of), nor one sent to a tracker.
void refuse_try_fixes_with(int nproc, const TrackerTargets& targets) {
    if (nproc > 1 || rendezvous_from_environment()) {
        throw BadInput(
            "--try-fixes: the fixes are tried in this one process; for a run of several "
            "processes, run each fix offered with --fix-of RUN_ID",
            {"--try-fixes"});
    }
    if (!targets.empty()) {
        throw BadInput(
            "--try-fixes: the tries are kept in the database only; leave out the "
            "tracker options, and send the run you keep with `runs export`",
            {"--try-fixes"});
    }
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code) {
    auto* command = app.add_subcommand("run", "Train once and record the run in the database");
    auto options = std::make_shared<ConfigOptions>();
    options->add_to(*command);
    auto db = std::make_shared<std::string>(default_db_path());
    auto name = std::make_shared<std::string>();
    command->add_option("--db", *db, "Run database (SQLite)")->capture_default_str();
    command->add_option("--name", *name, "Name of the run");
    auto tags = std::make_shared<std::string>();
    command->add_option("--tags", *tags, "Tags to find the run by, comma-separated");
    auto json = std::make_shared<bool>(false);
    command->add_flag("--json", *json, "JSON lines; the last one is the summary");
    auto fix_of = std::make_shared<std::int64_t>(0);
    command
        ->add_option("--fix-of", *fix_of,
                     "This run tries a fix offered to run RUN_ID: `runs show RUN_ID` then shows "
                     "what it measured against the prediction")
        ->check(run_id_check());
    auto try_fixes = std::make_shared<bool>(false);
    command->add_flag("--try-fixes", *try_fixes,
                      "When the run runs out of memory, train each fix it is offered in turn, "
                      "each to 3 steps past the one that failed, and show what each reached "
                      "beside its prediction (`runs show` keeps them)");
    auto targets = std::make_shared<TrackerTargets>();
    targets->add_run_options(*command);
    auto pace = std::make_shared<std::string>("full");
    command
        ->add_option("--pace", *pace,
                     "full: train at full speed; watchable or slow: pause 25 or 120 ms after "
                     "each step, so that the curves can be followed (a class watching its "
                     "runs); the pause takes no CPU, as the workbench's Training pace")
        ->check(CLI::IsMember(pace_names()))
        ->capture_default_str();
    auto nproc = std::make_shared<int>(1);
    command
        ->add_option("--nproc", *nproc,
                     "Train with N local processes (data parallel, one run, one rank each)")
        ->check(CLI::Range(1, kMostLocalWorkers));
    command->callback([=, &exit_code] {
        const ExperimentConfig config = refused_or_built([&] {
            const ExperimentConfig built = options->build();
            // Checked before training (and before any worker starts), not when it is saved.
            require_one_line(*name, "--name");
            require_one_line(*tags, "--tags");
            targets->check();
            if (*try_fixes) {
                refuse_try_fixes_with(*nproc, *targets);
            }
            return built;
        });
        // The run a fix is for, checked before any rank starts (rank 0 alone refused, and the
        // others waited out the rendezvous's timeout).
        const auto require_fixable = [&](const RunStore& store) {
            const std::optional<RunRecord> failed = store.find_run(*fix_of);
            if (!failed) {
                throw BadInput("--fix-of: " + *db + " has no run " + std::to_string(*fix_of) +
                                   " (`oomlab-cli runs list` shows them)",
                               {"--fix-of"});
            }
            if (failed->outcome.status == RunStatus::Completed) {
                throw BadInput("--fix-of: run " + std::to_string(*fix_of) +
                                   " completed; a fix is for a run that ended out of memory, "
                                   "failed or was stopped",
                               {"--fix-of"});
            }
        };
        if (*nproc > 1) {
            if (*fix_of > 0) {
                require_fixable(RunStore::open(*db));
            }
            const auto started = std::chrono::system_clock::now();
            WorkerExit rank0;
            exit_code = run_local_ranks(*nproc, config, &rank0);
            RunStore store = RunStore::open(*db);
            if (rank0.signal != 0) {
                // Killed before it could end the run: the launcher saw why, and says it.
                if (const auto run_id = store.fail_run_of_dead_writer(
                        rank0.pid, started, rank0.describe() + " before it ended the run")) {
                    const RunRecord run = *store.find_run(*run_id);
                    std::cerr << "run " << run.id << " recorded as failed after "
                              << run.outcome.steps << " steps (peak "
                              << format_bytes(run.outcome.peak_bytes) << ")\n";
                }
            }
            return;
        }
        const std::optional<Rendezvous> rendezvous = rendezvous_from_environment();
        const int rank = rendezvous ? rendezvous->rank : 0;
        RunStore store = RunStore::open(*db);
        if (*fix_of > 0 && rank == 0) {
            require_fixable(store);
        }
        const Pace paced = pace_named(*pace).value_or(Pace::Full);
        TerminalListener terminal(*json, paced);
        std::optional<trackers::MlflowLiveRun> live;
        if (rank == 0 && !targets->mlflow_uri.empty()) {
            live.emplace(mlflow_target(*targets), *db, targets->send_every());
            terminal.send_while_training(&*live);
        }
        PacedListener quiet(paced);
        // Rank 0 speaks for the run; the others only report their own failure.
        RunListener& listener = rank == 0 ? static_cast<RunListener&>(terminal) : quiet;
        const RunResult result = [&] {
            const StopOnSignals stop;
            return run_and_record(config, *name, store, listener, stop.requested(), rendezvous);
        }();
        exit_code = exit_code_of(result.outcome.status);
        if (rank > 0) {
            if (exit_code != kExitOk) {
                std::cerr << "error: rank " << rank << ": " << result.outcome.error << '\n';
            }
            return;
        }
        if (!tags->empty()) {
            store.set_tags(result.run_id, *tags);
        }
        if (*fix_of > 0 && !store.set_fix_of(result.run_id, *fix_of)) {
            std::cerr << "note: run " << *fix_of << " was deleted while its fix trained; run "
                      << result.run_id << " is kept without the link to it\n";
        }
        if (!targets->empty()) {
            std::optional<trackers::MlflowSentWhileTraining> sent;
            if (live) {
                sent = live->finish();
                if (const std::string problem = live->problem(); !problem.empty()) {
                    std::cerr << "warning: run " << result.run_id << " was not sent to MLflow "
                              << "while it trained: " << problem << "\n  it is sent now\n";
                }
            }
            mirror_run(store, result.run_id, *targets, *json, sent);
        }
        RunRecord saved = *store.find_run(result.run_id);
        saved.outcome.time_by_part = result.outcome.time_by_part;  // not stored: this run's own
        print_summary(saved, result.fixes, *json, *try_fixes);
        if (*try_fixes && !result.fixes.empty()) {
            const auto train = [&](const ExperimentConfig& fixed, const std::string& try_name) {
                const StopOnSignals stop;
                return run_and_record(fixed, try_name, store, terminal, stop.requested());
            };
            const auto summarise = [&](const RunRecord& run, const std::vector<OomFix>& fixes) {
                print_summary(run, fixes, *json);
            };
            if (try_each_fix(config, result, store, *tags, *json, train, summarise) ==
                kExitInterrupted) {
                exit_code = kExitInterrupted;
            }
        }
    });
}

}  // namespace oomlab::cli
