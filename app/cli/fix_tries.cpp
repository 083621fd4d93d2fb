#include "fix_tries.h"

#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "cli_context.h"
#include "oomlab/common/errors.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/launch/exit_code.h"
#include "oomlab/store/run_store.h"

namespace oomlab::cli {
namespace {

// Each fix past the step that failed by this many: its peak reached again, not once.
constexpr std::int64_t kStepsPastTheFailure = 3;

struct FixTry {
    OomFix fix;
    std::optional<RunRecord> run;  // none when the fix was refused
    std::string refused;
};

std::string assignments(const OomFix& fix) {
    std::string text;
    for (const auto& [key, value] : fix.set) {
        text += (text.empty() ? "" : " ") + key + "=" + value;
    }
    return text;
}

void print_tries_json(std::int64_t failed_run, const std::vector<FixTry>& tries) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const FixTry& tried : tries) {
        nlohmann::ordered_json set = nlohmann::ordered_json::object();
        for (const auto& [key, value] : tried.fix.set) {
            set[key] = value;
        }
        nlohmann::ordered_json row = {{"set", set},
                                      {"predicted_peak_bytes", tried.fix.predicted_peak_bytes}};
        if (tried.run) {
            row["run_id"] = tried.run->id;
            row["status"] = std::string(run_status_name(tried.run->outcome.status));
            row["steps"] = tried.run->outcome.steps;
            row["peak_bytes"] = tried.run->outcome.peak_bytes;
        } else {
            row["refused"] = tried.refused;
        }
        rows.push_back(std::move(row));
    }
    std::cout << json_line(nlohmann::ordered_json{
                     {"type", "tries"}, {"run_id", failed_run}, {"tries", rows}})
              << std::endl;
}

// The settings a try of `fix` trains with: the failed run's, the fix's applied, and at most
// kStepsPastTheFailure steps past the one at which the run failed (after `failed_steps`):
// far enough to show it passes where the run failed, its peak reached again, without training
// it whole (the fix kept is run with --fix-of for that).
ExperimentConfig try_config(const ExperimentConfig& failed, std::int64_t failed_steps,
                            const OomFix& fix) {
    ExperimentConfig config = failed;
    apply_settings(config, fix.set);
    // The step that failed is failed_steps + 1.
    const std::int64_t steps = failed_steps + 1 + kStepsPastTheFailure;
    if (config.train.max_steps == 0 || config.train.max_steps > steps) {
        config.train.max_steps = steps;
    }
    return config;
}

// "fix of run 4: memory.alloc_conf=expandable_segments:True"
std::string try_name(std::int64_t failed_run, const OomFix& fix) {
    return "fix of run " + std::to_string(failed_run) + ": " + assignments(fix);
}

}  // namespace

int try_each_fix(const ExperimentConfig& config, const RunResult& failed, RunStore& store,
                 const std::string& tags, bool json, const TrainTry& train,
                 const PrintSummary& print_summary) {
    std::vector<FixTry> tries;
    int exit_code = kExitOk;
    for (std::size_t i = 0; i < failed.fixes.size() && exit_code == kExitOk; ++i) {
        FixTry tried{failed.fixes[i], std::nullopt, {}};
        if (!json) {
            std::cout << "\ntrying fix " << i + 1 << " of " << failed.fixes.size() << ": "
                      << assignments(tried.fix) << "\n";
        }
        try {
            const RunResult result = train(try_config(config, failed.outcome.steps, tried.fix),
                                           try_name(failed.run_id, tried.fix));
            if (!store.set_fix_of(result.run_id, failed.run_id)) {
                std::cerr << "note: run " << failed.run_id << " was deleted while its fixes "
                          << "were tried; run " << result.run_id << " is kept without the link\n";
            }
            if (!tags.empty()) {
                store.set_tags(result.run_id, tags);
            }
            tried.run = *store.find_run(result.run_id);
            print_summary(*tried.run, result.fixes);
            if (result.outcome.status == RunStatus::Cancelled) {
                exit_code = kExitInterrupted;  // stopped: the fixes after it are not tried
            }
        } catch (const BadInput& error) {
            tried.refused = error.what();
            std::cerr << "warning: fix " << i + 1 << " (" << assignments(tried.fix)
                      << ") was refused: " << tried.refused << '\n';
        }
        tries.push_back(std::move(tried));
    }
    if (json) {
        print_tries_json(failed.run_id, tries);
    } else if (const std::optional<RunRecord> run = store.find_run(failed.run_id)) {
        std::cout << "\nrun " << run->id << " and the fixes it was offered, tried:\n";
        print_tried_fixes(*run, store.fix_runs_of(run->id));
    }
    return exit_code;
}

}  // namespace oomlab::cli
