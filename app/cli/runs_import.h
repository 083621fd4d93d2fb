// oomlab-cli runs import --from mlflow: a class's runs, read back from its tracking server;
// runs class: the class as it trains.
#pragma once

#include <CLI/CLI.hpp>

namespace oomlab::cli {

// runs import --from mlflow --tracking-uri URI [--experiment NAME] [--db FILE] [--json]
void add_runs_import_command(CLI::App& runs, int& exit_code);
// runs class --tracking-uri URI [--experiment NAME] [--predictions] [--json]
void add_runs_class_command(CLI::App& runs, int& exit_code);

}  // namespace oomlab::cli
