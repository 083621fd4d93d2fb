// JSON Lines: one object per line with a "text" string and a "label" string or integer.
#include <nlohmann/json.hpp>
#include <string>

#include "oomlab/common/json_parse.h"
#include "readers.h"
#include "text_lines.h"

namespace oomlab::data_detail {
namespace {

std::string label_of(const nlohmann::json& value, const std::string& path, std::size_t line) {
    if (value.is_string()) {
        return value.get<std::string>();
    }
    if (value.is_number_integer()) {
        return value.dump();
    }
    throw bad_input_at(path, line,
                       "\"label\" must be a string or an integer, not " +
                           std::string(value.type_name()) + "; fix the line");
}

nlohmann::json parse_line(const std::string& path, const NumberedLine& line) {
    try {
        return parse_json_limited(line.text, path + ":" + std::to_string(line.number));
    } catch (const nlohmann::json::parse_error& error) {
        throw bad_input_at(path, line.number,
                           "not valid JSON near column " + std::to_string(error.byte) +
                               "; each line must be one object such as "
                               "{\"text\": \"...\", \"label\": \"...\"}");
    } catch (const nlohmann::json::exception& error) {
        // A number beyond double's range (found by fuzzing: "5E655").
        throw bad_input_at(path, line.number, std::string("not valid JSON: ") + error.what());
    }
}

}  // namespace

std::vector<RawExample> read_json_lines(const std::string& path, std::string_view content) {
    return examples_per_line(path, non_blank_lines(content), 0, [&](const NumberedLine& line) {
        const nlohmann::json object = parse_line(path, line);
        if (!object.is_object()) {
            throw bad_input_at(path, line.number,
                               "expected a JSON object with \"text\" and \"label\", found " +
                                   std::string(object.type_name()));
        }
        const auto text = object.find("text");
        const auto label = object.find("label");
        if (text == object.end() || label == object.end()) {
            throw bad_input_at(path, line.number,
                               std::string("the object has no \"") +
                                   (text == object.end() ? "text" : "label") +
                                   "\" field; each line needs both \"text\" and \"label\"");
        }
        if (!text->is_string()) {
            throw bad_input_at(path, line.number,
                               "\"text\" must be a string, not " + std::string(text->type_name()));
        }
        std::string label_name = label_of(*label, path, line.number);
        std::string text_value(trim(text->get<std::string>()));
        if (trim(label_name).empty()) {
            throw bad_input_at(path, line.number, "\"label\" is empty; fix the line");
        }
        if (text_value.empty()) {
            throw bad_input_at(path, line.number, "\"text\" is empty; fix or remove the line");
        }
        return RawExample{std::move(text_value), std::move(label_name)};
    });
}

}  // namespace oomlab::data_detail
