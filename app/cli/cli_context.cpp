#include "cli_context.h"

#include <algorithm>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>

#include "oomlab/common/errors.h"
#include "oomlab/common/paths.h"
#include "oomlab/common/text_table.h"
#include "oomlab/common/utf8.h"
#include "oomlab/config/config_io.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/launch/local_workers.h"
#include "oomlab/launch/rendezvous.h"
#include "oomlab/run/prediction_check.h"
#include "oomlab/store/run_store.h"

namespace oomlab::cli {

void ConfigOptions::add_to(CLI::App& command) {
    command.add_option("--config", config_file, "Experiment config (JSON)");
    command.add_option("--set", overrides, "Override one key: KEY=VALUE (repeatable)")
        ->type_name("KEY=VALUE");
}

ExperimentConfig ConfigOptions::build() const {
    ExperimentConfig config =
        config_file.empty() ? ExperimentConfig{} : load_config_file(config_file);
    for (const auto& assignment : overrides) {
        apply_config_override(config, assignment);
    }
    validate_config(config);
    return config;
}

std::string default_db_path() {
    return RunStore::default_path();
}

RunRecord require_run(const RunStore& store, std::int64_t id) {
    auto run = store.find_run(id);
    if (!run) {
        throw BadInput("ID: there is no run " + std::to_string(id) + " in " + store.path() +
                       "; `oomlab-cli runs list` shows the runs");
    }
    return *run;
}

namespace {

std::atomic<bool> g_stop_requested{false};

extern "C" void request_stop(int signal) {
    g_stop_requested.store(true);
    std::signal(signal, SIG_DFL);  // a second one ends the process at once
}

}  // namespace

namespace {
std::vector<std::string> g_command_line;
}  // namespace

CLI::Validator seconds_check(const std::string& what, double least, double most,
                             const std::string& most_said) {
    const auto said = [](double seconds) {
        std::ostringstream text;
        text << seconds;
        return text.str();
    };
    const std::string limits =
        "from " + said(least) + " to " + said(most) + (most_said.empty() ? "" : " " + most_said);
    return CLI::Validator(
        [what, least, most, limits](const std::string& text) {
            double seconds = 0;
            const char* end = text.data() + text.size();
            const auto [rest, error] = std::from_chars(text.data(), end, seconds);
            return error == std::errc() && rest == end && seconds >= least && seconds <= most
                       ? std::string()
                       : text + ": give " + what + ", " + limits;
        },
        "SECONDS");
}

const CLI::Validator& run_id_check() {
    static const CLI::Validator check(
        [](std::string& text) -> std::string {
            std::int64_t id = 0;
            const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), id);
            if (text.empty() || error != std::errc() || end != text.data() + text.size() ||
                id < 1) {
                return quoted_excerpt(text) + " is not a run id (a whole number from 1 to " +
                       std::to_string(std::numeric_limits<std::int64_t>::max()) +
                       "; `oomlab-cli runs list` shows them)";
            }
            return {};
        },
        "RUN_ID");
    return check;
}

void set_command_line(int argc, char** argv) {
    g_command_line.assign(argv, argv + argc);
}

void refuse_process_group(const std::string& command) {
    if (const std::optional<Rendezvous> group = rendezvous_from_environment()) {
        throw BadInput(command + ": WORLD_SIZE=" + std::to_string(group->world_size) +
                           " is set, but only `oomlab-cli run` trains as one rank of a "
                           "data-parallel run; here every process would train all of it on its "
                           "own. Unset WORLD_SIZE, or use `run`",
                       {"WORLD_SIZE"});
    }
}

std::string signed_bytes(std::int64_t bytes) {
    return (bytes > 0 ? "+" : bytes < 0 ? "-" : "") + format_bytes(bytes < 0 ? -bytes : bytes);
}

const std::vector<std::string>& command_line() {
    return g_command_line;
}

std::string this_program() {
    // By its own name: started through /proc/self/exe, every copy would be called "exe" in ps,
    // top and nvidia-smi.
    const std::string path = this_program_path();
    return path.empty() ? "/proc/self/exe" : path;
}

StopOnSignals::StopOnSignals() {
    g_stop_requested.store(false);
    std::signal(SIGINT, request_stop);
    std::signal(SIGTERM, request_stop);
    const sigset_t signals = stop_signal_set();
    pthread_sigmask(SIG_BLOCK, &signals, &m_blocked_before);
    m_receiver = std::thread([this, signals] {
        pthread_sigmask(SIG_UNBLOCK, &signals, nullptr);
        std::unique_lock<std::mutex> lock(m_mutex);
        m_closing_changed.wait(lock, [this] { return m_closing; });  // the handler runs here
    });
}

StopOnSignals::~StopOnSignals() {
    {
        const std::lock_guard<std::mutex> lock(m_mutex);
        m_closing = true;
    }
    m_closing_changed.notify_all();
    m_receiver.join();
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    pthread_sigmask(SIG_SETMASK, &m_blocked_before, nullptr);
}

const std::atomic<bool>& StopOnSignals::requested() const {
    return g_stop_requested;
}

RunStore open_saved_runs(const std::string& path, const std::string& option) {
    std::error_code error;
    if (!std::filesystem::exists(path, error)) {
        throw BadInput(option + ": there is no run database at " + path +
                       (path == default_db_path()
                            ? "; runs are saved there once one is trained (oomlab-cli run)"
                            : "; check the path (the runs are where `run --db` saved them)"));
    }
    if (std::filesystem::is_regular_file(path, error) &&
        std::filesystem::file_size(path, error) == 0) {
        throw BadInput(option + ": " + path +
                       " is an empty file, not a run database; check the path (the runs are "
                       "where `run --db` saved them)");
    }
    return RunStore::open(path);
}

void print_breakdown(const RunOutcome& outcome) {
    const auto line = [&](std::size_t i, const char* note) {
        char text[96];
        std::snprintf(text, sizeof text, "    %-28s %10s", std::string(kBreakdownLabels[i]).c_str(),
                      format_bytes(breakdown_field(outcome.breakdown, i)).c_str());
        std::cout << text << note << '\n';
    };
    if (!outcome.has_breakdown()) {
        std::cout << "  peak memory          " << format_bytes(outcome.peak_bytes)
                  << " (the highest step peak of its rows)\n"
                  << (outcome.status == RunStatus::Running
                          ? "    no breakdown yet: it is recorded when the run ends\n"
                          : "    no breakdown: the run ended before recording it\n");
        return;
    }
    std::cout << "  peak memory          " << format_bytes(outcome.peak_bytes)
              << " (tensors at the busiest moment)\n";
    if (format_bytes(outcome.breakdown.tensors()) != format_bytes(outcome.peak_bytes)) {
        // A run of several processes keeps the first rank's breakdown; another peaked higher.
        std::cout << "    rank 0 at its own peak       "
                  << format_bytes(outcome.breakdown.tensors())
                  << "  (each rank's peak: by process, below)\n";
    }
    for (std::size_t i = 0; i < kBreakdownInPeak; ++i) {
        line(i, "");
    }
    std::cout << "  beside the peak\n";
    line(kBreakdownInPeak, "  reserved by the allocator, unused");
    line(kBreakdownInPeak + 1,
         "  CUDA: device used minus reserved (context, libraries, NCCL); CPU: the process's "
         "memory beyond tensors");
}

void print_ranks(const RunRecord& run) {
    if (run.ranks.empty()) {
        return;
    }
    std::cout << "  by process (" << run.world_size << " ranks)\n";
    for (int missing = 0; missing < run.world_size; ++missing) {
        // A rank with a database of its own (on another host), or lost before its first row.
        if (std::none_of(run.ranks.begin(), run.ranks.end(),
                         [&](const RankMemory& rank) { return rank.rank == missing; })) {
            std::cout << "    rank " << missing
                      << "    nothing recorded in this database (another host's database, or "
                         "lost before its first step)\n";
        }
    }
    TextTable table({"", "status", "peak", "parameters", "gradients", "optimizer", ""},
                    {2, 3, 4, 5}, "    ");
    for (const RankMemory& rank : run.ranks) {
        const std::string name = "rank " + std::to_string(rank.rank);
        if (!rank.status && rank.parameters == 0) {
            // A rank lost before its summary (killed, or its host unreachable): its step rows
            // hold only its peak.
            const char* why = run.outcome.status == RunStatus::Running
                                  ? "(no summary yet)"
                                  : "(lost: no ending reached this database)";
            table.add_row({name, "-", format_bytes(rank.peak_bytes), "", "", "", why});
            continue;
        }
        table.add_row({name, std::string(run_status_name(*rank.status)),
                       format_bytes(rank.peak_bytes), format_bytes(rank.parameters),
                       format_bytes(rank.gradients), format_bytes(rank.optimizer_state)});
    }
    table.print(std::cout);
}

void print_by_module(const RunOutcome& outcome) {
    if (outcome.by_module.empty()) {
        return;
    }
    std::cout << "  by module at the peak\n";
    TextTable table({"", "parameters", "gradients", "optimizer", "activations", "temporaries"},
                    {1, 2, 3, 4, 5}, "    ");
    for (const ModuleMemory& module : outcome.by_module) {
        // A layer's activations, or the temporaries of a step (the loss, the update).
        std::string activations = module.activations ? format_bytes(module.layer_activations())
                                                     : std::string("not measured");
        std::string temporaries =
            module.activations ? format_bytes(module.temporaries()) : std::string("not measured");
        table.add_row({module.module, format_bytes(module.parameters),
                       format_bytes(module.gradients), format_bytes(module.optimizer_state),
                       activations, temporaries});
    }
    table.print(std::cout);
}

void print_prediction(const RunRecord& run) {
    if (!run.prediction) {
        return;  // runs of older versions
    }
    const PredictionCheck check = check_prediction(*run.prediction, run.outcome);
    std::cout << "  predicted and measured at the peak\n";
    if (!check.not_comparable.empty()) {
        std::cout << "    (not held to the prediction: " << check.not_comparable << ")\n";
    }
    TextTable table({"", "predicted", "measured", ""}, {1, 2}, "    ");
    const auto add_row = [&table](const PredictionRow& row) {
        const auto key = std::find(kBreakdownKeys.begin(), kBreakdownKeys.end(), row.category);
        std::string name = row.module.empty() && key != kBreakdownKeys.end()
                               ? std::string(kBreakdownLabels[key - kBreakdownKeys.begin()])
                               : row.category;
        std::replace(name.begin(), name.end(), '_', ' ');
        name = row.module.empty() ? name : row.module + " " + name;
        std::string note;
        if (row.disagrees) {
            const std::optional<double> off = row.off();
            char text[32];
            if (off) {
                std::snprintf(text, sizeof text, " ! %+.0f%%", 100 * *off);
            }
            note = (off ? std::string(text) : std::string(" ! not predicted")) +
                   (row.why.empty() ? "" : ": " + row.why);
        }
        table.add_row({name, format_bytes(row.predicted), format_bytes(row.measured), note});
    };
    for (const auto* rows : {&check.by_category, &check.by_module}) {
        for (const PredictionRow& row : *rows) {
            add_row(row);
        }
    }
    table.print(std::cout);
    std::cout << "    " << check.disagreements()
              << " figure(s) off by more than 10% (and 64 KiB) of the prediction\n";
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

void print_tried_fixes(const RunRecord& run, const std::vector<RunRecord>& tried) {
    if (run.fixes_json.empty()) {
        return;
    }
    std::vector<OomFix> offered;
    try {
        offered = parse_oom_fixes_json(run.fixes_json, "run " + std::to_string(run.id));
    } catch (const std::exception& error) {
        std::cout << "  the fixes it was offered cannot be read: " << error.what() << '\n';
        return;
    }
    print_fixes(offered);
    for (const RunRecord& fix : tried) {
        std::cout << "  tried in run " << fix.id << " (" << printable_line(fix.name)
                  << "): " << run_status_name(fix.outcome.status) << ", "
                  << tried_fix_figures(run, fix, offered) << '\n';
    }
}

void print_staircase(const RunOutcome& outcome) {
    if (outcome.staircase.empty()) {
        return;
    }
    std::int64_t highest = 1;
    for (const MemoryStage& stage : outcome.staircase) {
        highest = std::max(highest, stage.allocated_bytes);
    }
    constexpr int kWidth = 30;
    std::cout << "  staircase (tensor memory after each stage)\n";
    TextTable table({"", "", ""}, {1}, "    ");
    for (const MemoryStage& stage : outcome.staircase) {
        const int bar = static_cast<int>(double(stage.allocated_bytes) / double(highest) * kWidth);
        table.add_row({stage.stage, format_bytes(stage.allocated_bytes), std::string(bar, '#')});
    }
    table.print(std::cout);
}

}  // namespace oomlab::cli
