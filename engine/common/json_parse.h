// Parsing JSON with a limit on nesting: a hostile document ({"a": {"a": ...}} 20,000 levels
// deep) must not exhaust the stack of the code that walks the result; and without duplicate
// keys, which JSON parsers resolve differently (nlohmann keeps the last one silently).
// Header-only; the including target links nlohmann_json.
#pragma once

#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "oomlab/common/errors.h"
#include "oomlab/common/utf8.h"

namespace oomlab {

inline constexpr int kMaxJsonDepth = 64;

// Parses `text`; throws BadInput naming `source` when the document nests deeper than
// `max_depth` or an object has a key twice. Syntax errors stay nlohmann's parse_error, for
// the caller to place.
template <typename Json = nlohmann::json>
Json parse_json_limited(std::string_view text, const std::string& source,
                        int max_depth = kMaxJsonDepth) {
    std::vector<std::set<std::string>> keys;  // of each object open at this point
    return Json::parse(text, [&](int depth, nlohmann::json::parse_event_t event, Json& parsed) {
        if (depth > max_depth) {
            throw bad_input_at(source, 0,
                               "nested more than " + std::to_string(max_depth) +
                                   " levels deep; this is not a file OOM Lab reads");
        }
        using Event = nlohmann::json::parse_event_t;
        if (event == Event::object_start) {
            keys.emplace_back();
        } else if (event == Event::object_end && !keys.empty()) {
            keys.pop_back();
        } else if (event == Event::key && !keys.empty() &&
                   !keys.back().insert(parsed.template get<std::string>()).second) {
            throw bad_input_at(source, 0,
                               "the key " + quoted_excerpt(parsed.template get<std::string>()) +
                                   " appears twice in one object; keep one (which one is meant "
                                   "is not guessed)");
        }
        return true;
    });
}

}  // namespace oomlab
