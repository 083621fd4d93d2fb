// Parsing JSON with a limit on nesting: a hostile document ({"a": {"a": ...}} 20,000 levels
// deep) must not exhaust the stack of the code that walks the result; and without duplicate
// keys, which JSON parsers resolve differently (nlohmann keeps the last one silently).
// Header-only; the including target links nlohmann_json.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "oomlab/common/errors.h"
#include "oomlab/common/utf8.h"

namespace oomlab {

inline constexpr int kMaxJsonDepth = 64;

namespace json_detail {

// Checks a document's nesting and keys as it is scanned, building nothing. (nlohmann's parser
// callback would do the same while building, but it rescans the enclosing array or object at
// each value's end: quadratic in a long list such as a profiler's trace.)
template <typename Json>
class LimitCheck : public nlohmann::json_sax<Json> {
public:
    using number_integer_t = typename Json::number_integer_t;
    using number_unsigned_t = typename Json::number_unsigned_t;
    using number_float_t = typename Json::number_float_t;
    using string_t = typename Json::string_t;
    using binary_t = typename Json::binary_t;

    LimitCheck(const std::string& source, int max_depth) : m_source(source), m_most(max_depth) {}

    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override {
        open();
        m_keys.emplace_back();
        return true;
    }
    bool key(string_t& name) override {
        if (!m_keys.back().insert(name).second) {
            throw bad_input_at(m_source, 0,
                               "the key " + quoted_excerpt(name) +
                                   " appears twice in one object; keep one (which one is meant "
                                   "is not guessed)");
        }
        return true;
    }
    bool end_object() override {
        m_keys.pop_back();
        --m_depth;
        return true;
    }
    bool start_array(std::size_t) override {
        open();
        return true;
    }
    bool end_array() override {
        --m_depth;
        return true;
    }
    // A syntax error stops the check; the parse that follows throws nlohmann's own error.
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
        return false;
    }

private:
    void open() {
        if (++m_depth > m_most) {
            throw bad_input_at(m_source, 0,
                               "nested more than " + std::to_string(m_most) +
                                   " levels deep; this is not a file OOM Lab reads");
        }
    }

    const std::string& m_source;
    int m_most;
    int m_depth = 0;
    std::vector<std::set<string_t>> m_keys;  // of each object open at this point
};

}  // namespace json_detail

// Parses `text` in time linear in it (checked first, then built); throws BadInput naming
// `source` when the document nests deeper than `max_depth` or an object has a key twice.
// Syntax errors stay nlohmann's parse_error, for the caller to place.
template <typename Json = nlohmann::json>
Json parse_json_limited(std::string_view text, const std::string& source,
                        int max_depth = kMaxJsonDepth) {
    json_detail::LimitCheck<Json> check(source, max_depth);
    Json::sax_parse(text, &check);
    return Json::parse(text);
}

// parse_json_limited for a document a person gave (a config, a lesson, a baseline): a syntax
// error, or a number too large for a double ("1E11111"), is BadInput naming `source` and the line.
template <typename Json = nlohmann::json>
Json parse_json_document(std::string_view text, const std::string& source) {
    try {
        return parse_json_limited<Json>(text, source);
    } catch (const typename Json::parse_error& error) {
        const std::size_t end = std::min<std::size_t>(error.byte, text.size());
        const std::size_t line =
            1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + end, '\n'));
        throw bad_input_at(source, line, std::string("invalid JSON: ") + error.what());
    } catch (const typename Json::exception& error) {
        throw bad_input_at(source, 0, std::string("invalid JSON: ") + error.what());
    }
}

}  // namespace oomlab
