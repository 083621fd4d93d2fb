// The real messages' tests (tests/data/wild/messages): a message read from its file, and an
// explanation as they search it, its summary, facts and tries a line each.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "oomlab/advice/oom_message.h"
#include "test_support.h"

namespace oomlab::test {

inline std::string wild_message(const std::string& file) {
    return read_text(fixture("wild/messages/" + file));
}

inline std::string lines_of(const std::vector<std::string>& lines) {
    std::string text;
    for (const std::string& line : lines) {
        text += line + "\n";
    }
    return text;
}

inline std::string explanation_text(const OomExplanation& e) {
    return e.summary + "\n" + lines_of(e.facts) + lines_of(e.tries);
}

// An explanation with its text as the tests search it.
struct Told {
    OomExplanation e;
    std::string text;   // the summary, the facts and the tries, a line each
    std::string tries;  // the tries alone
};

inline Told told_text(const std::string& message) {
    OomExplanation e = explain_oom_message(message);
    std::string all = explanation_text(e);
    std::string tries = lines_of(e.tries);
    return {std::move(e), std::move(all), std::move(tries)};
}

inline Told told(const std::string& file) {
    return told_text(wild_message(file));
}

}  // namespace oomlab::test
