// Reading lesson files and finding the installed ones.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "oomlab/common/json_parse.h"

#include "oomlab/common/errors.h"
#include "oomlab/common/files.h"
#include "oomlab/common/json_locate.h"
#include "oomlab/common/paths.h"
#include "oomlab/common/utf8.h"
#include "oomlab/config/config_io.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/config/snapshot_paths.h"
#include "oomlab/config/value_parsing.h"
#include "oomlab/estimator/estimator.h"
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

// Reads a lesson file's values by key, naming the file, the line and where the key is in each
// refusal: "batch.json:14: claims[0].at_most must be a number, not \"half\"".
struct LessonReader {
    std::string source;
    const std::string& json_text;

    // `value` locates the line when it is not `where` (a key inside the object `where` names).
    [[noreturn]] void refuse(const std::string& where, const std::string& why,
                             const std::string& value = {}) const {
        throw bad_input_at(source, json_line_of(json_text, value.empty() ? where : value),
                           where + why);
    }

    const Json& at(const Json& object, const char* key, const std::string& where) const {
        if (!object.is_object() || !object.contains(key)) {
            refuse(where, std::string(where.empty() ? "" : " ") + "has no \"" + key + "\"");
        }
        return object.at(key);
    }

    // A text that is not empty, as one line: a control character from the file (an escape
    // that clears the screen or sets the terminal's title) is shown as '?', never sent as is.
    std::string text(const Json& object, const char* key, const std::string& where) const {
        return printable_line(raw_text(object, key, where));
    }

    // The same for prose (the explanation, on_cuda's why), whose line breaks stay.
    std::string prose(const Json& object, const char* key, const std::string& where) const {
        return printable_text(raw_text(object, key, where));
    }

    double number(const Json& object, const char* key, const std::string& where,
                  double otherwise) const {
        if (!object.contains(key)) {
            return otherwise;
        }
        const Json& value = object.at(key);
        if (!value.is_number() || !std::isfinite(value.get<double>())) {
            refuse(path(where, key), " must be a number, not " + value.dump());
        }
        return value.get<double>();
    }

    std::string raw_text(const Json& object, const char* key, const std::string& where) const {
        const Json& value = at(object, key, where);
        if (!value.is_string() || value.get<std::string>().empty()) {
            refuse(path(where, key), " must be a text that is not empty, not " + value.dump());
        }
        return value.get<std::string>();
    }

    // Refuses a key of `object` that is none of `known` (a "claim" for "claims" would make a
    // lesson of no claims that always passes), naming its line and the closest known key.
    void only_keys(const Json& object, std::initializer_list<const char*> known,
                   const std::string& where) const {
        if (!object.is_object()) {
            return;  // what it must be is said where it is read
        }
        for (const auto& [key, value] : object.items()) {
            std::string closest;
            std::size_t distance = SIZE_MAX;
            for (const char* name : known) {
                if (key == name) {
                    distance = 0;
                    break;
                }
                if (const std::size_t d = config_detail::edit_distance(key, name); d < distance) {
                    distance = d;
                    closest = name;
                }
            }
            if (distance != 0) {
                const std::string at = path(where, key.c_str());
                refuse(at, ": unknown key; did you mean \"" + closest + "\"?", at);
            }
        }
    }

    static std::string path(const std::string& where, const char* key) {
        return where.empty() ? key : where + "." + key;
    }
};

Settings read_settings(const Json& object, const LessonReader& read, const std::string& where) {
    Settings settings;
    if (!object.is_object()) {
        read.refuse(where, " must be an object of config keys");
    }
    ExperimentConfig check;
    for (const auto& [key, value] : object.items()) {
        try {
            set_config_value(check, key, value_text(value));
        } catch (const BadInput& error) {
            read.refuse(where, std::string(": ") + error.what(), where + "." + key);
        }
        settings.emplace_back(key, value_text(value));
    }
    return settings;
}

// A list of config keys ("hide", "lock"), each one the form has.
std::vector<std::string> read_keys(const Json& list, const LessonReader& read,
                                   const std::string& where) {
    if (!list.is_array()) {
        read.refuse(where, " must be a list of config keys, not " + list.dump());
    }
    std::vector<std::string> keys;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string at = where + "[" + std::to_string(i) + "]";
        if (!list[i].is_string()) {
            read.refuse(at, " must be a config key, not " + list[i].dump());
        }
        const std::string key = list[i].get<std::string>();
        if (!find_config_key(key)) {
            read.refuse(at, ": unknown config key \"" + key + "\"; did you mean \"" +
                                closest_config_key(key) + "\"?");
        }
        keys.push_back(key);
    }
    return keys;
}

LessonClaim read_claim(const Json& claim, const LessonReader& read, const std::string& where) {
    LessonClaim parsed;
    if (!claim.is_object()) {
        read.refuse(where, " must be an object (a claim), not " + claim.dump());
    }
    if (claim.contains("largest")) {
        read.only_keys(claim, {"largest", "run", "module"}, where);
        parsed.kind = LessonClaim::Kind::Largest;
        parsed.metric = read.text(claim, "largest", where);
        parsed.label = read.text(claim, "run", where);
        parsed.module = read.text(claim, "module", where);
        if (!is_lesson_metric(parsed.metric + "@" + parsed.module)) {
            read.refuse(where + ".largest",
                        " is a kind of memory (parameters, gradients, optimizer_state, "
                        "activations), not \"" +
                            parsed.metric + "\"");
        }
    } else if (claim.contains("status")) {
        parsed.kind = LessonClaim::Kind::Status;
        read.only_keys(claim, {"status", "run", "fragmented", "after_steps"}, where);
        parsed.label = read.text(claim, "run", where);
        const auto status = parse_run_status(read.text(claim, "status", where));
        if (!status) {
            read.refuse(where + ".status", ": unknown status " + claim["status"].dump());
        }
        parsed.status = *status;
        if (claim.contains("fragmented")) {
            if (!claim["fragmented"].is_boolean()) {
                read.refuse(where + ".fragmented",
                            " must be true or false, not " + claim["fragmented"].dump());
            }
            parsed.fragmented = claim["fragmented"].get<bool>();
        }
        if (claim.contains("after_steps")) {
            const Json& steps = claim["after_steps"];
            if (!steps.is_number_integer() || steps.get<std::int64_t>() < 1) {
                read.refuse(where + ".after_steps",
                            " must be a whole number of steps, 1 or more, not " + steps.dump());
            }
            parsed.after_steps = steps.get<std::int64_t>();
        }
    } else {
        read.only_keys(claim, {"metric", "smaller", "than", "at_most"}, where);
        parsed.metric = read.text(claim, "metric", where);
        if (!is_lesson_metric(parsed.metric)) {
            read.refuse(where + ".metric",
                        ": unknown metric \"" + parsed.metric +
                            "\"; use peak_bytes, mean_step_peak, mean_device_used, mean_reserved, "
                            "a breakdown "
                            "category or KIND@MODULE (activations@block 1)");
        }
        parsed.smaller = read.text(claim, "smaller", where);
        parsed.than = read.text(claim, "than", where);
        parsed.at_most = read.number(claim, "at_most", where, 1.0);
        if (parsed.at_most <= 0) {
            read.refuse(where + ".at_most", " must be above 0, not " + claim["at_most"].dump());
        }
    }
    return parsed;
}

// The modules a run of the lesson trains, as its memory by module names them.
std::vector<std::string> modules_of(const ExperimentConfig& config) {
    DataProfile shape;  // any shape: the names depend on the model alone
    shape.train_examples = 64;
    shape.vocab_rows = 64;
    shape.embedding_dim = 8;
    shape.lengths = {8};
    shape.longest = 8;
    shape.mean_length = 8;
    std::vector<std::string> names;
    for (const ModuleMemory& module : estimate_memory(config, shape).by_module) {
        names.push_back(module.module);
    }
    return names;
}

// What a claim names must be there: its runs among the lesson's, its module among those runs'.
void check_claim(const Lesson& lesson, const LessonClaim& claim, const LessonReader& read,
                 const std::string& where) {
    const auto run_named = [&](const std::string& label, const char* key) -> const LessonRun& {
        std::string labels;
        for (const LessonRun& run : lesson.runs) {
            if (run.label == label) {
                return run;
            }
            labels += (labels.empty() ? "\"" : ", \"") + run.label + "\"";
        }
        read.refuse(where + "." + key,
                    ": no run is labelled \"" + label + "\"; the runs are " + labels);
    };
    std::vector<const LessonRun*> runs;
    if (claim.kind == LessonClaim::Kind::Ratio) {
        runs = {&run_named(claim.smaller, "smaller"), &run_named(claim.than, "than")};
    } else {
        runs = {&run_named(claim.label, "run")};
    }
    const auto at = claim.metric.find('@');
    const std::string module = claim.kind == LessonClaim::Kind::Largest ? claim.module
                               : at != std::string::npos ? claim.metric.substr(at + 1)
                                                         : std::string();
    if (module.empty()) {
        return;
    }
    for (const LessonRun* run : runs) {
        const std::vector<std::string> modules = modules_of(lesson_config(lesson, *run));
        if (std::find(modules.begin(), modules.end(), module) == modules.end()) {
            std::string names;
            for (const std::string& name : modules) {
                names += (names.empty() ? "\"" : ", \"") + name + "\"";
            }
            read.refuse(where, ": run \"" + run->label + "\" has no module \"" + module +
                                   "\"; its modules are " + names);
        }
    }
}

std::vector<LessonClaim> read_claims(const Json& claims, const Lesson& lesson,
                                     const LessonReader& read, const std::string& key) {
    if (!claims.is_array()) {
        read.refuse(key, " must be a list of claims, not " + claims.dump());
    }
    std::vector<LessonClaim> parsed;
    for (std::size_t i = 0; i < claims.size(); ++i) {
        const std::string where = key + "[" + std::to_string(i) + "]";
        parsed.push_back(read_claim(claims[i], read, where));
        check_claim(lesson, parsed.back(), read, where);
    }
    return parsed;
}

// Each run's settings together, as `run` checks them before it trains (a quantized table that
// trains, a model width the heads do not divide, sparse gradients with Adam, a dataset that is
// not there): refused when the lesson is read, naming the run, not when a class is halfway
// through it.
void check_runs(const Lesson& lesson, const LessonReader& read, bool on_cuda) {
    for (std::size_t i = 0; i < lesson.runs.size(); ++i) {
        try {
            const ExperimentConfig config = lesson_config(lesson, lesson.runs[i], on_cuda);
            validate_config(config);
            if (const auto problems = config_input_problems(config); !problems.empty()) {
                throw BadInput(problems.front().second, {problems.front().first});
            }
        } catch (const BadInput& error) {
            read.refuse("runs[" + std::to_string(i) + "]",
                        std::string(" (\"") + lesson.runs[i].label + "\"" +
                            (on_cuda ? ", with on_cuda's settings" : "") + "): " + error.what());
        }
    }
}

}  // namespace

Lesson parse_lesson(const std::string& json_text, const std::string& source) {
    const Json document = parse_json_document<Json>(json_text, source);
    const LessonReader read{source, json_text};
    if (!document.is_object()) {
        read.refuse("", "a lesson is a JSON object, not " + std::string(document.type_name()));
    }
    read.only_keys(
        document,
        {"title", "explanation", "base", "processes", "runs", "claims", "hide", "lock", "on_cuda"},
        "");
    Lesson lesson;
    lesson.name = fs::path(source).stem().string();
    lesson.title = read.text(document, "title", "");
    lesson.explanation = read.prose(document, "explanation", "");
    if (document.contains("base")) {
        lesson.base = read_settings(document["base"], read, "base");
    }
    if (document.contains("processes")) {
        const Json& processes = document["processes"];
        if (!processes.is_number_integer() || processes.get<std::int64_t>() < 1 ||
            processes.get<std::int64_t>() > kMaxLessonProcesses) {
            read.refuse("processes", " must be a whole number from 1 to " +
                                         std::to_string(kMaxLessonProcesses) + ", not " +
                                         processes.dump());
        }
        lesson.processes = processes.get<int>();
    }
    const Json& runs = read.at(document, "runs", "");
    if (!runs.is_array() || runs.size() < 2) {
        read.refuse("runs", " must list at least two runs: a lesson compares them");
    }
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const std::string where = "runs[" + std::to_string(i) + "]";
        read.only_keys(runs[i], {"label", "set"}, where);
        LessonRun run{read.text(runs[i], "label", where), {}};
        if (runs[i].contains("set")) {
            run.settings = read_settings(runs[i]["set"], read, where + ".set");
        }
        for (const LessonRun& earlier : lesson.runs) {
            if (earlier.label == run.label) {
                read.refuse(where + ".label", ": two runs are labelled \"" + run.label + "\"");
            }
        }
        lesson.runs.push_back(std::move(run));
    }
    lesson.claims = read_claims(document.value("claims", Json::array()), lesson, read, "claims");
    check_runs(lesson, read, false);
    for (const auto& [key, keys] : {std::pair{"hide", &lesson.hide}, {"lock", &lesson.lock}}) {
        if (document.contains(key)) {
            *keys = read_keys(document[key], read, key);
        }
    }
    if (document.contains("on_cuda")) {
        const Json& on_cuda = document["on_cuda"];
        if (!on_cuda.is_object()) {
            read.refuse("on_cuda", " must be an object (set, claims, why), not " + on_cuda.dump());
        }
        read.only_keys(on_cuda, {"set", "claims", "why"}, "on_cuda");
        LessonOnCuda cuda;
        cuda.why = read.prose(on_cuda, "why", "on_cuda");
        if (on_cuda.contains("set")) {
            cuda.settings = read_settings(on_cuda["set"], read, "on_cuda.set");
        }
        if (on_cuda.contains("claims")) {
            cuda.claims = read_claims(on_cuda["claims"], lesson, read, "on_cuda.claims");
        }
        lesson.on_cuda = std::move(cuda);
        check_runs(lesson, read, true);
    }
    return lesson;
}

std::vector<Lesson> load_lessons(const std::string& folder, std::vector<BrokenLesson>* broken) {
    if (!fs::is_directory(folder)) {
        throw BadInput(folder +
                       ": no lessons folder; set OOMLAB_RESOURCE_DIR to the folder "
                       "that holds lessons/");
    }
    std::vector<Lesson> lessons;
    for (const auto& entry : fs::directory_iterator(folder)) {
        if (entry.path().extension() != ".json") {
            continue;
        }
        try {
            lessons.push_back(load_lesson_file(entry.path().string()));
        } catch (const BadInput& error) {
            if (broken) {
                broken->push_back({entry.path().stem().string(), error.what()});
            }
        }
    }
    std::sort(lessons.begin(), lessons.end(),
              [](const Lesson& a, const Lesson& b) { return a.name < b.name; });
    if (broken) {
        std::sort(broken->begin(), broken->end(),
                  [](const BrokenLesson& a, const BrokenLesson& b) { return a.name < b.name; });
    }
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

Lesson load_lesson_file(const std::string& path) {
    return parse_lesson(read_text_input(path, "lesson file", kMaxLessonBytes), path);
}

Lesson find_or_load_lesson(const std::string& name_or_file) {
    const bool file =
        name_or_file.size() > 5 && name_or_file.compare(name_or_file.size() - 5, 5, ".json") == 0;
    if (file) {
        return load_lesson_file(name_or_file);
    }
    if (fs::exists(name_or_file) || name_or_file.find('/') != std::string::npos) {
        // A file, but not a lesson file: "no lesson x.txt" would send the lecturer looking for
        // a name.
        throw BadInput(name_or_file +
                       ": a lesson file is a JSON file whose name ends in .json "
                       "(docs/workbench.md describes the format); `lesson list` names the "
                       "installed lessons");
    }
    std::vector<BrokenLesson> broken;
    const std::vector<Lesson> lessons = load_lessons(lessons_folder(), &broken);
    for (const BrokenLesson& lesson : broken) {
        if (lesson.name == name_or_file) {
            throw BadInput(lesson.why);  // the lesson asked for is the one that does not read
        }
    }
    return find_lesson(lessons, name_or_file);
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

ExperimentConfig lesson_config(const Lesson& lesson, const LessonRun& run, bool on_cuda) {
    ExperimentConfig config;
    apply_settings(config, lesson.base);
    if (on_cuda && lesson.on_cuda) {
        apply_settings(config, lesson.on_cuda->settings);
    }
    apply_settings(config, run.settings);
    if (lesson.runs.size() > 1) {  // one snapshot file per run, not one for all
        config.debug.memory_snapshot = snapshot_path_per_run(config.debug.memory_snapshot);
    }
    return config;
}

}  // namespace oomlab
