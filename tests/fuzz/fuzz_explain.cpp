// Out-of-memory messages (`oomlab-cli explain`): any bytes give an explanation or BadInput
// naming what is wrong, never a crash, a hang or deep recursion (the reader scans by hand, in
// one pass). The same bytes fed to OomLogReader in pieces give the same explanation.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "oomlab/advice/oom_message.h"
#include "oomlab/common/errors.h"

namespace {

// The explanation as JSON, or "" for BadInput.
std::string explained(const std::string& text) {
    try {
        return oomlab::oom_explanation_json(oomlab::explain_oom_message(text));
    } catch (const oomlab::BadInput&) {
        return "";
    }
}

std::string explained_in_pieces(std::string_view text, std::size_t piece) {
    oomlab::OomLogReader reader;
    for (std::size_t at = 0; at < text.size(); at += piece) {
        reader.feed(text.substr(at, piece));
    }
    try {
        return oomlab::oom_explanation_json(reader.explain());
    } catch (const oomlab::BadInput&) {
        return "";
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const std::size_t piece = 1 + (size == 0 ? 0 : data[0] % 61);
    if (explained(text) != explained_in_pieces(text, piece)) {
        __builtin_trap();
    }
    return 0;
}
