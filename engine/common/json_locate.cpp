#include "oomlab/common/json_locate.h"

#include <vector>

namespace oomlab {
namespace {

// A container being scanned: its path, and the path of the value being read in it.
struct Open {
    bool object = false;
    std::string path;
    std::size_t index = 0;  // a list's item
    std::string key;        // an object's last key
};

std::string path_of_value(const std::vector<Open>& open) {
    if (open.empty()) {
        return {};
    }
    const Open& in = open.back();
    if (!in.object) {
        return in.path + "[" + std::to_string(in.index) + "]";
    }
    return in.path.empty() ? in.key : in.path + "." + in.key;
}

// The string starting at text[at] (a quote), unescaped only as far as a key needs; `at` moves
// past its closing quote.
std::string read_string(const std::string& text, std::size_t& at) {
    std::string out;
    for (++at; at < text.size() && text[at] != '"'; ++at) {
        if (text[at] == '\\' && at + 1 < text.size()) {
            ++at;
        }
        out += text[at];
    }
    ++at;
    return out;
}

}  // namespace

std::size_t json_line_of(const std::string& text, const std::string& path) {
    std::vector<Open> open;
    std::size_t line = 1;
    bool expect_key = false;
    for (std::size_t at = 0; at < text.size();) {
        const char c = text[at];
        if (c == '\n') {
            ++line;
            ++at;
        } else if (c == ' ' || c == '\t' || c == '\r' || c == ':') {
            ++at;
        } else if (c == ',') {
            if (!open.empty()) {
                ++open.back().index;
                expect_key = open.back().object;
            }
            ++at;
        } else if (c == '}' || c == ']') {
            if (!open.empty()) {
                open.pop_back();
            }
            expect_key = false;
            ++at;
        } else if (expect_key && c == '"') {
            open.back().key = read_string(text, at);
            expect_key = false;
        } else {  // a value starts
            const std::string here = path_of_value(open);
            if (here == path) {
                return line;
            }
            if (c == '{' || c == '[') {
                open.push_back({c == '{', here, 0, {}});
                expect_key = c == '{';
                ++at;
            } else if (c == '"') {
                read_string(text, at);
            } else {
                while (at < text.size() && text[at] != ',' && text[at] != '}' && text[at] != ']' &&
                       text[at] != '\n') {
                    ++at;
                }
            }
        }
    }
    return 0;
}

}  // namespace oomlab
