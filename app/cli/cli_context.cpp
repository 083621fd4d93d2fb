#include "cli_context.h"

#include "oomlab/config/config_io.h"
#include "oomlab/config/config_keys.h"
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

}  // namespace oomlab::cli
