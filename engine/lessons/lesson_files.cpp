// Reading lesson files and finding the installed ones.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "common/json_parse.h"

#include "oomlab/common/errors.h"
#include "oomlab/common/files.h"
#include "oomlab/common/paths.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/config/snapshot_paths.h"
#include "oomlab/lessons/lesson.h"

namespace oomlab {
namespace {

constexpr std::uint64_t kMaxLessonBytes = 1 << 20;
constexpr int kMaxLessonProcesses = 8;  // local processes a lesson may start

namespace fs = std::filesystem;
using Json = nlohmann::json;

std::string value_text(const Json& value) {
    return value.is_string() ? value.get<std::string>() : value.dump();
}

Settings read_settings(const Json& object, const std::string& source, const std::string& where) {
    Settings settings;
    if (!object.is_object()) {
        throw BadInput(source + ": " + where + " must be an object of config keys");
    }
    ExperimentConfig check;
    for (const auto& [key, value] : object.items()) {
        try {
            set_config_value(check, key, value_text(value));
        } catch (const BadInput& error) {
            throw BadInput(source + ": " + where + ": " + error.what());
        }
        settings.emplace_back(key, value_text(value));
    }
    return settings;
}

const Json& required(const Json& object, const char* key, const std::string& source) {
    if (!object.contains(key)) {
        throw BadInput(source + ": missing \"" + key + "\"");
    }
    return object.at(key);
}

}  // namespace

Lesson parse_lesson(const std::string& json_text, const std::string& source) {
    Json document;
    try {
        document = parse_json_limited(json_text, source);
    } catch (const Json::exception& error) {
        throw BadInput(source + ": invalid JSON: " + error.what());
    }
    Lesson lesson;
    try {
        lesson.name = fs::path(source).stem().string();
        lesson.title = required(document, "title", source).get<std::string>();
        lesson.explanation = required(document, "explanation", source).get<std::string>();
        if (document.contains("base")) {
            lesson.base = read_settings(document["base"], source, "base");
        }
        lesson.processes = document.value("processes", 1);
        if (lesson.processes < 1 || lesson.processes > kMaxLessonProcesses) {
            throw BadInput(source + ": \"processes\" must be 1 to " +
                           std::to_string(kMaxLessonProcesses) + ", not " +
                           document["processes"].dump());
        }
        for (const auto& run : required(document, "runs", source)) {
            lesson.runs.push_back({required(run, "label", source).get<std::string>(),
                                   read_settings(run.value("set", Json::object()), source,
                                                 "runs." + run.value("label", std::string()))});
        }
        for (const auto& claim : document.value("claims", Json::array())) {
            LessonClaim parsed;
            if (claim.contains("largest")) {
                parsed.kind = LessonClaim::Kind::Largest;
                parsed.metric = claim["largest"].get<std::string>();
                parsed.label = required(claim, "run", source).get<std::string>();
                parsed.module = required(claim, "module", source).get<std::string>();
                if (!is_lesson_metric(parsed.metric + "@" + parsed.module)) {
                    throw BadInput(source + ": claims: \"largest\" is a kind of memory (" +
                                   "parameters, gradients, optimizer_state, activations), not " +
                                   claim["largest"].dump());
                }
            } else if (claim.contains("status")) {
                parsed.kind = LessonClaim::Kind::Status;
                parsed.label = required(claim, "run", source).get<std::string>();
                const auto status = parse_run_status(claim["status"].get<std::string>());
                if (!status) {
                    throw BadInput(source + ": claims: unknown status " + claim["status"].dump());
                }
                parsed.status = *status;
            } else {
                parsed.metric = required(claim, "metric", source).get<std::string>();
                if (!is_lesson_metric(parsed.metric)) {
                    throw BadInput(source + ": claims: unknown metric \"" + parsed.metric +
                                   "\"; use peak_bytes, mean_step_peak, mean_device_used, a "
                                   "breakdown category or KIND@MODULE (activations@block 1)");
                }
                parsed.smaller = required(claim, "smaller", source).get<std::string>();
                parsed.than = required(claim, "than", source).get<std::string>();
                parsed.at_most = claim.value("at_most", 1.0);
            }
            lesson.claims.push_back(parsed);
        }
    } catch (const Json::exception& error) {
        throw BadInput(source + ": " + error.what());
    }
    if (lesson.runs.size() < 2) {
        throw BadInput(source + ": a lesson compares at least two runs");
    }
    return lesson;
}

std::vector<Lesson> load_lessons(const std::string& folder) {
    if (!fs::is_directory(folder)) {
        throw BadInput(folder +
                       ": no lessons folder; set OOMLAB_RESOURCE_DIR to the folder "
                       "that holds lessons/");
    }
    std::vector<Lesson> lessons;
    for (const auto& entry : fs::directory_iterator(folder)) {
        if (entry.path().extension() == ".json") {
            lessons.push_back(
                parse_lesson(read_text_input(entry.path().string(), "lesson file", kMaxLessonBytes),
                             entry.path().string()));
        }
    }
    std::sort(lessons.begin(), lessons.end(),
              [](const Lesson& a, const Lesson& b) { return a.name < b.name; });
    return lessons;
}

const Lesson& find_lesson(const std::vector<Lesson>& lessons, const std::string& name) {
    for (const auto& lesson : lessons) {
        if (lesson.name == name) {
            return lesson;
        }
    }
    std::string names;
    for (const auto& lesson : lessons) {
        names += (names.empty() ? "" : ", ") + lesson.name;
    }
    throw BadInput("NAME: no lesson \"" + name + "\"; the lessons are: " + names);
}

std::string lessons_folder() {
    if (const char* dir = std::getenv("OOMLAB_RESOURCE_DIR"); dir && *dir) {
        return std::string(dir) + "/lessons";
    }
    if (const fs::path program = this_program_path(); !program.empty()) {
        const fs::path installed = program.parent_path().parent_path() / "share/oomlab/lessons";
        if (fs::is_directory(installed)) {
            return installed.string();
        }
    }
    return std::string(OOMLAB_SOURCE_RESOURCES) + "/lessons";
}

ExperimentConfig lesson_config(const Lesson& lesson, const LessonRun& run) {
    ExperimentConfig config;
    apply_settings(config, lesson.base);
    apply_settings(config, run.settings);
    if (lesson.runs.size() > 1) {  // one snapshot file per run, not one for all
        config.debug.memory_snapshot = snapshot_path_per_run(config.debug.memory_snapshot);
    }
    return config;
}

}  // namespace oomlab
