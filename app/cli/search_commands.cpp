// oomlab-cli find-batch-size and sweep: many trials or runs from one config.
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli_context.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/utf8.h"
#include "oomlab/config/config_io.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/config/snapshot_paths.h"
#include "oomlab/launch/rendezvous.h"
#include "oomlab/run/run_json.h"
#include "oomlab/session/batch_size_search.h"
#include "oomlab/session/run_session.h"

namespace oomlab::cli {
namespace {

struct GridAxis {
    std::string key;
    std::vector<std::string> values;
};

GridAxis parse_axis(const std::string& text) {
    const std::size_t equals = text.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == text.size()) {
        throw BadInput("--grid \"" + text +
                       "\": expected KEY=V1,V2,... e.g. train.batch_size=16,32");
    }
    GridAxis axis{text.substr(0, equals), {}};
    std::string rest = text.substr(equals + 1);
    for (std::size_t start = 0; start <= rest.size();) {
        const std::size_t comma = std::min(rest.find(',', start), rest.size());
        axis.values.push_back(rest.substr(start, comma - start));
        start = comma + 1;
    }
    return axis;
}

// Every combination of the axes' values, as (key, value) settings.
std::vector<std::vector<std::pair<std::string, std::string>>> grid_points(
    const std::vector<GridAxis>& axes) {
    std::vector<std::vector<std::pair<std::string, std::string>>> points{{}};
    for (const auto& axis : axes) {
        std::vector<std::vector<std::pair<std::string, std::string>>> next;
        for (const auto& point : points) {
            for (const auto& value : axis.values) {
                auto extended = point;
                extended.emplace_back(axis.key, value);
                next.push_back(std::move(extended));
            }
        }
        points = std::move(next);
    }
    return points;
}

class SilentListener final : public RunListener {};

}  // namespace

void add_find_batch_size_command(CLI::App& app, int& exit_code) {
    auto* command = app.add_subcommand("find-batch-size",
                                       "The largest micro-batch that fits under memory.cap_mb");
    auto options = std::make_shared<ConfigOptions>();
    options->add_to(*command);
    auto json = std::make_shared<bool>(false);
    command->add_flag("--json", *json, "JSON lines: one per trial, then the answer");
    auto nproc = std::make_shared<int>(1);
    command
        ->add_option("--nproc", *nproc,
                     "Search for N local processes (data parallel): a batch fits when it fits "
                     "on every rank")
        ->check(CLI::Range(1, kMostLocalWorkers));
    command->callback([=, &exit_code] {
        const ExperimentConfig config = options->build();
        if (*nproc > 1) {
            exit_code = run_local_ranks(*nproc, config);
            return;
        }
        const std::optional<Rendezvous> rendezvous = rendezvous_from_environment();
        // Rank 0 speaks for the search; the others run the same trials in silence.
        const bool speaks = !rendezvous || rendezvous->rank == 0;
        const BatchSizeSearch search = find_batch_size(
            config,
            [&](const BatchTrial& trial) {
                if (!speaks) {
                    return;
                }
                if (*json) {
                    std::cout << json_line(nlohmann::ordered_json{
                                     {"type", "trial"},
                                     {"batch_size", trial.batch_size},
                                     {"fits", trial.fits},
                                     {"peak_bytes", trial.peak_bytes},
                                     {"predicted_bytes", trial.predicted_bytes}})
                              << std::endl;
                } else {
                    std::cout << "  batch " << trial.batch_size << ": "
                              << (trial.fits ? "fits, peak " + format_bytes(trial.peak_bytes)
                                             : std::string("out of memory"))
                              << " (predicted " << format_bytes(trial.predicted_bytes) << ")"
                              << std::endl;
                }
            },
            rendezvous);
        exit_code = search.batch_size > 0 ? kExitOk : kExitOutOfMemory;
        if (!speaks) {
            return;
        }
        const std::string processes =
            rendezvous ? " on each of " + std::to_string(rendezvous->world_size) + " processes"
                       : "";
        if (*json) {
            nlohmann::ordered_json result{{"type", "result"},
                                          {"batch_size", search.batch_size},
                                          {"predicted", search.predicted},
                                          {"cap_bytes", search.cap_bytes},
                                          {"trials", search.trials.size()}};
            if (rendezvous) {
                result["processes"] = rendezvous->world_size;
            }
            std::cout << json_line(result) << std::endl;
        } else {
            std::cout << "largest micro-batch under " << format_bytes(search.cap_bytes) << ": "
                      << search.batch_size << processes << " (" << search.trials.size()
                      << " trials; the estimator predicted " << search.predicted << ")\n";
        }
    });
}

void add_sweep_command(CLI::App& app, int& exit_code) {
    auto* command = app.add_subcommand("sweep", "One recorded run per point of a settings grid");
    auto options = std::make_shared<ConfigOptions>();
    options->add_to(*command);
    auto grids = std::make_shared<std::vector<std::string>>();
    auto db = std::make_shared<std::string>(default_db_path());
    auto json = std::make_shared<bool>(false);
    command->add_option("--grid", *grids, "KEY=V1,V2,... (repeatable: the product is swept)")
        ->required();
    command->add_option("--db", *db, "Run database (SQLite)")->capture_default_str();
    command->add_flag("--json", *json, "One JSON summary line per run");
    command->callback([=, &exit_code] {
        refuse_process_group("sweep");
        std::vector<GridAxis> axes;
        for (const auto& text : *grids) {
            axes.push_back(parse_axis(text));
        }
        const ExperimentConfig base = options->build();
        // Every point is checked before the first run, so a typo costs no runs.
        std::vector<std::pair<std::string, ExperimentConfig>> runs;
        const auto points = grid_points(axes);
        for (const auto& point : points) {
            ExperimentConfig config = base;
            if (points.size() > 1) {  // one snapshot file per run, not one for all
                config.debug.memory_snapshot = snapshot_path_per_run(config.debug.memory_snapshot);
            }
            std::string name = "sweep";
            for (const auto& [key, value] : point) {
                set_config_value(config, key, value);
                name += " " + key + "=" + printable_line(value);  // a name is one line
            }
            try {
                validate_config(config);  // settings that cannot go together
            } catch (const BadInput& error) {
                throw BadInput("sweep point" + name.substr(5) + ": " + error.what(), error.keys());
            }
            runs.emplace_back(name, config);
        }
        RunStore store = RunStore::open(*db);
        SilentListener listener;
        const StopOnSignals stop;
        exit_code = kExitOk;
        for (const auto& [name, config] : runs) {
            const RunResult result =
                run_and_record(config, name, store, listener, stop.requested());
            const RunRecord record = *store.find_run(result.run_id);
            if (*json) {
                std::cout << run_summary_json(record) << std::endl;
            } else {
                std::cout << "run " << record.id << "  " << run_status_name(record.outcome.status)
                          << "  peak " << format_bytes(record.outcome.peak_bytes) << "  " << name
                          << std::endl;
            }
            if (result.outcome.status == RunStatus::Cancelled) {
                exit_code = kExitInterrupted;  // the points not run are left out
                break;
            }
        }
    });
}

}  // namespace oomlab::cli
