#include "cli_context.h"

#include <cstdio>

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
    ExperimentConfig config = config_file.empty() ? ExperimentConfig{} : load_config_file(config_file);
    for (const auto& assignment : overrides) {
        apply_config_override(config, assignment);
    }
    validate_config(config);
    return config;
}

std::string default_db_path() { return RunStore::default_path(); }

std::string format_bytes(std::int64_t bytes) {
    char text[32];
    const double mib = static_cast<double>(bytes) / (1 << 20);
    if (mib >= 1024) {
        std::snprintf(text, sizeof text, "%.2f GiB", mib / 1024);
    } else {
        std::snprintf(text, sizeof text, "%.1f MiB", mib);
    }
    return text;
}

}  // namespace oomlab::cli
