#include "oomlab/snapshot_reader/recorded_program.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "oomlab/common/errors.h"
#include "oomlab/common/files.h"

namespace oomlab {

namespace {

constexpr std::uint64_t kMostProgramFileBytes = 1 << 20;

}  // namespace

std::string recorded_program_path(const std::string& record) {
    return record + ".program.json";
}

void check_recorded_program_path(const std::string& record, bool force) {
    check_output_path(recorded_program_path(record),
                      {"--out", {}, force, [](const std::string& path) {
                           return file_starts_with(path, "{\n  \"command\"");
                       }});
}

void write_recorded_program(const std::string& record, const RecordedProgram& program) {
    const nlohmann::json file{{"command", program.command},
                              {"directory", program.directory},
                              {"exit_code", program.exit_code},
                              {"seconds", program.seconds}};
    write_file_atomically(recorded_program_path(record), file.dump(2) + "\n");
}

std::optional<RecordedProgram> read_recorded_program(const std::string& record) {
    const std::string path = recorded_program_path(record);
    std::error_code error;
    if (!std::filesystem::is_regular_file(path, error)) {
        return std::nullopt;
    }
    const std::string text = read_text_input(path, "the recorded program", kMostProgramFileBytes);
    const auto refuse = [&](const std::string& key, const std::string& why) {
        return BadInput(path + ": \"" + key + "\" " + why +
                        "; it is written by oomlab-cli record beside its record: record the "
                        "program again");
    };
    const nlohmann::json file = nlohmann::json::parse(text, nullptr, false);
    if (!file.is_object()) {
        throw BadInput(path +
                       ": not a JSON object; it is written by oomlab-cli record beside "
                       "its record: record the program again");
    }
    RecordedProgram program;
    const auto command = file.find("command");
    if (command == file.end() || !command->is_array() || command->empty()) {
        throw refuse("command", "is not a list of the program and its arguments");
    }
    for (const auto& word : *command) {
        if (!word.is_string()) {
            throw refuse("command", "holds " + std::string(word.type_name()) + ", not text");
        }
        program.command.push_back(word.get<std::string>());
    }
    const auto directory = file.find("directory");
    if (directory == file.end() || !directory->is_string()) {
        throw refuse("directory", "is not the folder it ran in");
    }
    program.directory = directory->get<std::string>();
    const auto exit_code = file.find("exit_code");
    if (exit_code == file.end() || !exit_code->is_number_integer()) {
        throw refuse("exit_code", "is not a whole number");
    }
    program.exit_code = exit_code->get<int>();
    const auto seconds = file.find("seconds");
    if (seconds == file.end() || !seconds->is_number() || seconds->get<double>() < 0) {
        throw refuse("seconds", "is not a number of seconds");
    }
    program.seconds = seconds->get<double>();
    return program;
}

}  // namespace oomlab
