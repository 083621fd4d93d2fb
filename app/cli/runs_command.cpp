// oomlab-cli runs list|show|diff|export|import|class|tag|delete
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>

#include "calibration.h"
#include "cli_context.h"
#include "fail_over.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/files.h"
#include "oomlab/common/text_table.h"
#include "oomlab/common/utf8.h"
#include "oomlab/config/config_io.h"
#include "oomlab/run/memory_diff.h"
#include "oomlab/run/run_json.h"
#include "oomlab/store/run_store.h"
#include "runs_import.h"
#include "tracker_export.h"

namespace oomlab::cli {
namespace {

// runs export --to mlflow|tensorboard: every run is checked before the first is sent.
void export_to_tracker(const std::string& db, const std::vector<std::int64_t>& ids,
                       const std::string& to, const std::string& out, TrackerTargets targets,
                       bool json) {
    if (to == "mlflow") {
        if (targets.mlflow_uri.empty()) {
            throw BadInput("--to mlflow needs --tracking-uri http://HOST:PORT (the MLflow server)");
        }
        targets.check("--tracking-uri", "--experiment");
    } else {
        if (out.empty()) {
            throw BadInput("--to tensorboard needs --out DIR (the log folder TensorBoard reads)");
        }
        targets.mlflow_uri.clear();
        targets.tensorboard_dir = out;
    }
    const RunStore store = open_saved_runs(db);
    for (const std::int64_t id : ids) {
        require_run(store, id);
    }
    for (const std::int64_t id : ids) {
        export_run(store, id, targets, json);
    }
}

void print_table(const std::vector<RunRecord>& runs) {
    TextTable table({"id", "status", "steps", "loss", "val acc", "peak", "name"}, {0, 2, 3, 4, 5});
    for (const auto& run : runs) {
        std::ostringstream accuracy;
        if (run.outcome.val_accuracy) {
            accuracy << std::fixed << std::setprecision(1) << *run.outcome.val_accuracy * 100
                     << "%";
        }
        std::ostringstream loss;
        if (run.outcome.final_train_loss) {
            loss << std::fixed << std::setprecision(4) << *run.outcome.final_train_loss;
        }
        table.add_row({std::to_string(run.id), std::string(run_status_name(run.outcome.status)),
                       std::to_string(run.outcome.steps), loss.str(), accuracy.str(),
                       format_bytes(run.outcome.peak_bytes), printable_line(run.name)});
    }
    table.print(std::cout);
}

// The run's memory.alloc_conf, read from its stored settings ("" where they do not read).
std::string alloc_conf_of(const RunRecord& run) {
    try {
        return parse_config_json(run.config_json, "run " + std::to_string(run.id))
            .memory.alloc_conf;
    } catch (const std::exception&) {
        return "";
    }
}

void print_differences(const char* title, const std::vector<MemoryDifference>& rows) {
    std::cout << title << '\n';
    if (rows.empty()) {
        std::cout << "    (no difference)\n";
    }
    TextTable table({"", "", "", ""}, {1, 2, 3}, "    ");
    for (const MemoryDifference& row : rows) {
        const std::string name =
            row.module.empty() ? row.category : row.module + " " + row.category;
        const std::int64_t difference = row.difference();
        table.add_row(
            {name, format_bytes(row.a_bytes), format_bytes(row.b_bytes), signed_bytes(difference)});
    }
    table.print(std::cout);
}

void add_diff_command(CLI::App& runs, int& exit_code) {
    auto* command = runs.add_subcommand(
        "diff", "What differs between two runs at their peaks, per category and per module");
    auto db = std::make_shared<std::string>(default_db_path());
    auto json = std::make_shared<bool>(false);
    auto ids = std::make_shared<std::vector<std::int64_t>>();
    command->add_option("--db", *db, "Run database (SQLite)")->capture_default_str();
    command->add_flag("--json", *json, "JSON output");
    command->add_option("A B", *ids, "The two run ids")
        ->required()
        ->expected(2)
        ->check(run_id_check());
    auto fail_over = std::make_shared<FailOverOption>(*command, "B's peak against A's");
    command->callback([=, &exit_code] {
        const std::optional<GrowthLimit> limit = fail_over->limit();
        const RunStore store = open_saved_runs(*db);
        const RunRecord a = require_run(store, ids->at(0));
        const RunRecord b = require_run(store, ids->at(1));
        const MemoryDiff diff = diff_memory(a.outcome, b.outcome);
        const std::vector<Growth> growths{{"the peak", diff.a_peak, diff.b_peak}};
        if (*json) {
            nlohmann::ordered_json out = nlohmann::ordered_json::parse(memory_diff_json(diff));
            if (limit) {
                out["fail_over"] = fail_over_json(growths, *limit);
            }
            std::cout << json_line(out) << '\n';
        } else {
            std::cout << "A: run " << a.id << " " << printable_line(a.name) << ", peak "
                      << format_bytes(diff.a_peak) << "\nB: run " << b.id << " "
                      << printable_line(b.name) << ", peak " << format_bytes(diff.b_peak)
                      << "\nB - A: " << (diff.b_peak >= diff.a_peak ? "+" : "")
                      << format_bytes(diff.b_peak - diff.a_peak) << "\n";
            std::cout << "                                          A           B  B - A\n";
            for (const std::string& note : diff.notes) {
                std::cout << "  " << note << '\n';
            }
            if (diff.notes.empty()) {
                print_differences("  by category", diff.by_category);
                print_differences("  by module", diff.by_module);
            }
        }
        exit_code = limit ? fail_over_verdict(growths, *limit) : kExitOk;
    });
}

}  // namespace

void add_runs_command(CLI::App& app, int& exit_code) {
    auto* runs =
        app.add_subcommand("runs", "List, show, compare, export, import and delete saved runs");
    runs->require_subcommand(1);
    auto db = std::make_shared<std::string>(default_db_path());
    auto json = std::make_shared<bool>(false);
    auto id = std::make_shared<std::int64_t>(0);
    auto format = std::make_shared<std::string>("json");
    auto out = std::make_shared<std::string>();
    auto force = std::make_shared<bool>(false);
    auto tags = std::make_shared<std::string>();
    auto ids = std::make_shared<std::vector<std::int64_t>>();
    auto to = std::make_shared<std::string>("file");
    auto targets = std::make_shared<TrackerTargets>();
    for (auto* command : {runs->add_subcommand("list", "Saved runs, newest first"),
                          runs->add_subcommand("show", "One run's summary and breakdown"),
                          runs->add_subcommand("export",
                                               "Runs' metrics as CSV or JSON, or sent to MLflow "
                                               "or TensorBoard"),
                          runs->add_subcommand("tag", "Set a run's tags (comma-separated)"),
                          runs->add_subcommand("delete", "Delete a run and its metrics")}) {
        command->add_option("--db", *db, "Run database (SQLite)")->capture_default_str();
        command->add_flag("--json", *json, "JSON output");
        if (command->get_name() == "export") {
            command->add_option("ID", *ids, "Run ids")->required()->check(run_id_check());
            command->add_option("--format", *format, "csv or json")
                ->check(CLI::IsMember({"csv", "json"}))
                ->capture_default_str();
            command
                ->add_option("--to", *to,
                             "file (CSV or JSON), mlflow (--tracking-uri) or tensorboard "
                             "(--out DIR)")
                ->check(CLI::IsMember({"file", "mlflow", "tensorboard"}))
                ->capture_default_str();
            command->add_option("--tracking-uri", targets->mlflow_uri,
                                "--to mlflow: the tracking server, http://HOST:PORT");
            command
                ->add_option("--experiment", targets->experiment,
                             "--to mlflow: the experiment (made when missing)")
                ->capture_default_str();
            command->add_option("--user", targets->user, kUserHelp);
            command->add_option("--out", *out,
                                "File to write (default: standard output); --to tensorboard: "
                                "the log folder");
            command->add_flag("--force", *force, "Replace an existing file that is not an export");
        } else if (command->get_name() != "list") {
            command->add_option("ID", *id, "Run id")->required()->check(run_id_check());
        }
        if (command->get_name() == "tag") {
            command->add_option("TAGS", *tags, "Tags, comma-separated (\"\" clears them)")
                ->required();
        }
    }
    add_diff_command(*runs, exit_code);
    add_calibration_command(*runs, exit_code);
    add_runs_import_command(*runs, exit_code);
    add_runs_class_command(*runs, exit_code);
    runs->get_subcommand("list")->callback([=, &exit_code] {
        const RunStore store = open_saved_runs(*db);
        const auto all = store.list_runs();
        if (*json) {
            for (const auto& run : all) {
                std::cout << run_summary_json(run) << '\n';
            }
        } else {
            print_table(all);
        }
        exit_code = kExitOk;
    });
    runs->get_subcommand("show")->callback([=, &exit_code] {
        const RunStore store = open_saved_runs(*db);
        const RunRecord run = require_run(store, *id);
        if (*json) {
            std::cout << run_summary_json(run) << '\n';
        } else {
            print_table({run});
            print_breakdown(run.outcome);
            print_ranks(run);
            print_by_module(run.outcome);
            print_prediction(run);
            print_staircase(run.outcome);
            if (run.outcome.fragmentation) {
                std::cout << "  at the OOM: "
                          << describe_fragmentation(*run.outcome.fragmentation, alloc_conf_of(run))
                          << '\n';
            }
            for (const auto& event : store.events(run.id)) {
                std::cout << "  [" << event.kind << "] step " << event.step << ": " << event.message
                          << '\n';
            }
            if (!run.outcome.error.empty()) {
                std::cout << "error: " << run.outcome.error << '\n';
            }
            print_tried_fixes(run, store.fix_runs_of(run.id));
            if (run.fix_of) {
                std::cout << "tries a fix offered to run " << *run.fix_of << '\n';
            }
        }
        exit_code = kExitOk;
    });
    runs->get_subcommand("export")->callback([=, &exit_code] {
        if (*to != "file") {
            export_to_tracker(*db, *ids, *to, *out, *targets, *json);
            exit_code = kExitOk;
            return;
        }
        if (!out->empty()) {
            check_output_path(*out, {"--out", {*db}, *force, is_run_export_file});
        }
        if (ids->size() > 1 && *format == "json" && !*json) {
            throw BadInput(
                "ID: one run at a time as indented JSON; add --json for one object per "
                "line, or --format csv for one table");
        }
        const RunStore store = open_saved_runs(*db);
        std::vector<RunMetrics> tables;
        std::string text;
        for (const std::int64_t run_id : *ids) {
            const RunRecord run = require_run(store, run_id);
            auto metrics = store.metrics(run.id);
            if (*format == "json") {
                text += run_export_json(run, metrics, store.events(run.id),
                                        /*indent=*/*json ? -1 : 2) +
                        "\n";  // --json: one object per line
            } else {
                tables.push_back({run.id, std::move(metrics)});
            }
        }
        if (*format == "csv") {
            text = metrics_csv(tables);
        }
        if (out->empty()) {
            std::cout << text;
        } else {
            write_file_atomically(*out, text);
        }
        exit_code = kExitOk;
    });
    runs->get_subcommand("tag")->callback([=, &exit_code] {
        RunStore store = open_saved_runs(*db);
        require_run(store, *id);
        store.set_tags(*id, *tags);
        std::cout << (*json ? run_summary_json(*store.find_run(*id))
                            : "run " + std::to_string(*id) + " tagged \"" + *tags + "\"")
                  << '\n';
        exit_code = kExitOk;
    });
    runs->get_subcommand("delete")->callback([=, &exit_code] {
        RunStore store = open_saved_runs(*db);
        if (!store.delete_run(*id)) {
            throw BadInput("ID: there is no run " + std::to_string(*id) + " in " + *db);
        }
        std::cout << (*json ? "{\"deleted\":" + std::to_string(*id) + "}"
                            : "deleted run " + std::to_string(*id))
                  << '\n';
        exit_code = kExitOk;
    });
}

}  // namespace oomlab::cli
