#include "runs_import.h"

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli_context.h"
#include "oomlab/store/run_store.h"
#include "oomlab/trackers/mlflow_export.h"
#include "oomlab/trackers/mlflow_import.h"

namespace oomlab::cli {

void add_runs_import_command(CLI::App& runs, int& exit_code) {
    auto* command = runs.add_subcommand(
        "import", "Runs sent to an MLflow server (a class's, from their machines), read back");
    // One object the options write into, kept alive by the callback.
    struct Options {
        std::string db = default_db_path();
        std::string from;
        trackers::MlflowSource source;
        bool json = false;
    };
    auto options = std::make_shared<Options>();
    command->add_option("--from", options->from, "Where the runs are: mlflow")
        ->required()
        ->check(CLI::IsMember({"mlflow"}));
    command
        ->add_option("--tracking-uri", options->source.tracking_uri,
                     "The tracking server, http://HOST:PORT")
        ->required();
    command
        ->add_option("--experiment", options->source.experiment,
                     "The experiment the runs were sent to")
        ->capture_default_str();
    command->add_option("--db", options->db, "Run database (SQLite; made when missing)")
        ->capture_default_str();
    command->add_flag("--json", options->json, "One JSON object");
    command->callback([options, &exit_code] {
        const trackers::MlflowSource& source = options->source;
        trackers::check_tracking_uri(source.tracking_uri, "--tracking-uri");
        RunStore store = RunStore::open(options->db);
        const trackers::MlflowImport imported = trackers::import_from_mlflow(store, source);
        if (options->json) {
            std::cout << json_line(
                             nlohmann::ordered_json{{"imported", imported.added},
                                                    {"on_server", imported.on_server},
                                                    {"already_here", imported.already_here},
                                                    {"being_sent", imported.being_sent},
                                                    {"not_from_oomlab", imported.not_from_oomlab},
                                                    {"notes", imported.notes}})
                      << '\n';
        } else {
            std::cout << trackers::describe(source, imported) << '\n';
        }
        exit_code = kExitOk;
    });
}

}  // namespace oomlab::cli
