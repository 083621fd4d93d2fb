// oomlab-cli config keys|show: every setting with its values and meaning; the effective config.
#include <iomanip>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli_context.h"
#include "oomlab/config/config_io.h"
#include "oomlab/config/config_keys.h"

namespace oomlab::cli {
namespace {

std::string allowed_values(const ConfigKeyInfo& key) {
    switch (key.kind) {
        case ValueKind::Integer:
        case ValueKind::Real: {
            std::ostringstream text;
            text << (key.kind == ValueKind::Integer ? "integer" : "number")
                 << " >= " << key.minimum;
            if (key.maximum > key.minimum) {
                text << ", <= " << key.maximum;
            }
            return text.str();
        }
        case ValueKind::Text:
            return "text";
        default: {
            std::string joined;
            for (const auto& choice : key.choices) {
                joined += (joined.empty() ? "" : " | ") + choice;
            }
            return joined;
        }
    }
}

}  // namespace

void add_config_command(CLI::App& app, int& exit_code) {
    auto* config = app.add_subcommand("config", "Describe the settings; show an effective config");
    config->require_subcommand(1);
    auto* keys = config->add_subcommand("keys", "Every config key, its values and its meaning");
    auto json = std::make_shared<bool>(false);
    keys->add_flag("--json", *json, "One JSON object per key");
    keys->callback([json, &exit_code] {
        const ExperimentConfig defaults;
        for (const auto& key : config_keys()) {
            const std::string value = get_config_value(defaults, key.name);
            if (*json) {
                std::cout << json_line(nlohmann::ordered_json{{"key", key.name},
                                                              {"default", value},
                                                              {"values", allowed_values(key)},
                                                              {"help", key.help}})
                          << '\n';
            } else {
                std::cout << key.name << " = " << (value.empty() ? "\"\"" : value) << "   ("
                          << allowed_values(key) << ")\n    " << key.help << "\n";
            }
        }
        exit_code = kExitOk;
    });
    auto* show = config->add_subcommand("show", "The config after --config and --set, as JSON");
    auto options = std::make_shared<ConfigOptions>();
    options->add_to(*show);
    show->callback([options, &exit_code] {
        std::cout << config_to_json(options->build()) << '\n';
        exit_code = kExitOk;
    });
}

}  // namespace oomlab::cli
