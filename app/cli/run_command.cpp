// oomlab-cli run: one recorded run, with progress on the terminal.
#include <csignal>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli_context.h"
#include "oomlab/run/run_json.h"
#include "oomlab/session/run_session.h"

namespace oomlab::cli {
namespace {

std::atomic<bool> g_cancel{false};

extern "C" void request_cancel(int) {
    g_cancel.store(true);
    std::signal(SIGINT, SIG_DFL);  // a second Ctrl+C ends the process at once
}

// Prints progress about once a second: text for people, JSON lines with --json.
class TerminalListener final : public RunListener {
public:
    explicit TerminalListener(bool json) : m_json(json) {}

    void on_run_created(std::int64_t run_id, const ExperimentInfo& info) override {
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
            std::cout << line.dump() << std::endl;
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

    void on_metrics(const std::vector<MetricRow>& rows) override {
        for (const auto& row : rows) {
            if (row.phase == "step") {
                m_last = row;
            }
        }
    }

    void on_event(const EventRow& event) override {
        if (m_json) {
            nlohmann::ordered_json line = {{"type", "event"},
                                           {"step", event.step},
                                           {"kind", event.kind},
                                           {"message", event.message}};
            std::cout << line.dump() << std::endl;
        } else {
            std::cout << "  [" << event.kind << "] step " << event.step << ": " << event.message
                      << std::endl;
        }
    }

    void on_progress(const TrainProgress& progress) override {
        if (progress.elapsed_seconds - m_last_print < 1.0 &&
            progress.step != progress.total_steps) {
            return;
        }
        m_last_print = progress.elapsed_seconds;
        const double loss = m_last.loss.value_or(NAN);  // printed as "nan" before the first flush
        const std::int64_t peak = m_last.peak_bytes.value_or(0);
        if (m_json) {
            nlohmann::ordered_json line = {{"type", "progress"},
                                           {"step", progress.step},
                                           {"total_steps", progress.total_steps},
                                           {"epoch", progress.epoch},
                                           {"loss", m_last.loss ? nlohmann::json(loss) : nullptr},
                                           {"step_peak_bytes", peak},
                                           {"elapsed_seconds", progress.elapsed_seconds},
                                           {"eta_seconds", progress.eta_seconds}};
            std::cout << line.dump() << std::endl;
            return;
        }
        std::printf("  step %lld/%lld  epoch %d  loss %.4f  step peak %s  ETA %.0fs\n",
                    static_cast<long long>(progress.step),
                    static_cast<long long>(progress.total_steps), progress.epoch, loss,
                    format_bytes(peak).c_str(), std::max(0.0, progress.eta_seconds));
        std::fflush(stdout);
    }

private:
    bool m_json;
    double m_last_print = -1e9;
    MetricRow m_last;
};

nlohmann::ordered_json fixes_json(const std::vector<OomFix>& fixes) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const OomFix& fix : fixes) {
        nlohmann::ordered_json set = nlohmann::ordered_json::object();
        for (const auto& [key, value] : fix.set) {
            set[key] = value;
        }
        list.push_back({{"set", set},
                        {"predicted_peak_bytes", fix.predicted_peak_bytes},
                        {"cost", fix_cost_name(fix.cost)},
                        {"reason", fix.reason}});
    }
    return list;
}

void print_fixes(const std::vector<OomFix>& fixes) {
    if (fixes.empty()) {
        std::cout << "  no change is predicted to fit under the memory this run had\n";
        return;
    }
    std::cout << "  what to try (cheapest first; each is predicted to fit):\n";
    for (const OomFix& fix : fixes) {
        std::string assignments;
        for (const auto& [key, value] : fix.set) {
            assignments += " --set " + key + "=" + value;
        }
        std::cout << "   " << assignments << "\n      " << fix.reason
                  << " (cost: " << fix_cost_name(fix.cost) << ", predicted peak "
                  << format_bytes(fix.predicted_peak_bytes) << ")\n";
    }
}

void print_summary(const RunRecord& run, const std::vector<OomFix>& fixes, bool json) {
    const RunOutcome& outcome = run.outcome;
    if (json) {
        auto summary = nlohmann::ordered_json::parse(run_summary_json(run));
        if (outcome.status == RunStatus::Oom) {
            summary["fixes"] = fixes_json(fixes);
        }
        std::cout << summary.dump() << std::endl;
        return;
    }
    std::cout << "run " << run.id << " " << run_status_name(outcome.status) << " after "
              << outcome.steps << " steps in " << format_duration(outcome.wall_seconds) << '\n';
    if (outcome.final_train_loss) {
        std::cout << "  final train loss     " << *outcome.final_train_loss << '\n';
    }
    if (outcome.val_accuracy) {
        std::cout << "  validation accuracy  " << *outcome.val_accuracy * 100 << " %\n";
    }
    std::cout << "  peak memory          " << format_bytes(outcome.peak_bytes) << '\n';
    for (std::size_t i = 0; i < kBreakdownKeys.size(); ++i) {
        std::cout << "    " << kBreakdownKeys[i] << ": "
                  << format_bytes(breakdown_field(outcome.breakdown, i)) << '\n';
    }
    if (!outcome.error.empty()) {
        std::cout << "  " << outcome.error << '\n';
    }
    if (outcome.status == RunStatus::Oom) {
        print_fixes(fixes);
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
    auto json = std::make_shared<bool>(false);
    command->add_flag("--json", *json, "JSON lines; the last one is the summary");
    command->callback([=, &exit_code] {
        const ExperimentConfig config = options->build();
        RunStore store = RunStore::open(*db);
        TerminalListener listener(*json);
        std::signal(SIGINT, request_cancel);
        const RunResult result = run_and_record(config, *name, store, listener, g_cancel);
        std::signal(SIGINT, SIG_DFL);
        print_summary(*store.find_run(result.run_id), result.fixes, *json);
        switch (result.outcome.status) {
            case RunStatus::Completed:
                exit_code = kExitOk;
                break;
            case RunStatus::Oom:
                exit_code = kExitOutOfMemory;
                break;
            case RunStatus::Cancelled:
                exit_code = kExitInterrupted;
                break;
            default:
                exit_code = kExitFailure;
                break;
        }
    });
}

}  // namespace oomlab::cli
