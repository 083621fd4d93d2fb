// Where a value is in a JSON text, for refusals that name the line as well as the key: parsers
// (nlohmann's among them) keep no positions in what they build, so the text is scanned again
// for the one value a refusal is about.
#pragma once

#include <cstddef>
#include <string>

namespace oomlab {

// The 1-based line where the value at `path` starts in `text`, a valid JSON document: `path`
// names keys with dots and list items with brackets ("claims[0].at_most", "runs[1].set",
// "base.train.max_steps" for the key "train.max_steps" of "base"; "" is the document). 0 when
// no value is there.
std::size_t json_line_of(const std::string& text, const std::string& path);

}  // namespace oomlab
