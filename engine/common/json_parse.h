// Parsing JSON with a limit on nesting: a hostile document ({"a": {"a": ...}} 20,000 levels
// deep) must not exhaust the stack of the code that walks the result. Header-only; the
// including target links nlohmann_json.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "oomlab/common/errors.h"

namespace oomlab {

inline constexpr int kMaxJsonDepth = 64;

// Parses `text`; throws BadInput naming `source` when the document nests deeper than
// `max_depth`. Syntax errors stay nlohmann's parse_error, for the caller to place.
template <typename Json = nlohmann::json>
Json parse_json_limited(std::string_view text, const std::string& source,
                        int max_depth = kMaxJsonDepth) {
    return Json::parse(
        text, [&](int depth, nlohmann::json::parse_event_t /*event*/, Json& /*parsed*/) {
            if (depth > max_depth) {
                throw bad_input_at(source, 0,
                                   "nested more than " + std::to_string(max_depth) +
                                       " levels deep; this is not a file OOM Lab reads");
            }
            return true;
        });
}

}  // namespace oomlab
