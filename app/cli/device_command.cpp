#include <iostream>

#include <nlohmann/json.hpp>

#include "cli_context.h"
#include "oomlab/common/format.h"
#include "oomlab/common/version.h"
#include "oomlab/lessons/lesson.h"
#include "oomlab/session/experiment.h"

namespace oomlab::cli {

void add_device_command(CLI::App& app, int& exit_code) {
    auto* command = app.add_subcommand("device", "Show LibTorch and the devices it can train on");
    auto* json = command->add_flag("--json", "One JSON object");
    command->callback([json, &exit_code] {
        const auto devices = available_devices();
        if (*json) {
            nlohmann::ordered_json out = {
                {"engine_version", engine_version()},         {"torch_version", torch_version()},
                {"torch_cuda_version", torch_cuda_version()}, {"cuda", devices.size() > 1},
                {"lessons_folder", lessons_folder()},         {"devices", nlohmann::json::array()}};
            for (const auto& device : devices) {
                out["devices"].push_back({{"name", device.name},
                                          {"description", device.description},
                                          {"total_bytes", device.total_bytes}});
            }
            std::cout << json_line(out) << '\n';
        } else {
            std::cout << "OOM Lab " << engine_version() << ", " << torch_build() << '\n';
            for (const auto& device : devices) {
                std::cout << "  " << device.name << "  " << device.description;
                if (device.total_bytes > 0) {
                    std::cout << ", " << format_bytes(device.total_bytes);
                }
                std::cout << '\n';
            }
        }
        exit_code = kExitOk;
    });
}

}  // namespace oomlab::cli
