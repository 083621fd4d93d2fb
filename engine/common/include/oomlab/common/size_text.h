// Sizes of memory as a person writes them: "80GiB", "80 GiB", "80G", "80GB" or "512mb" (memory
// is counted in binary units, as nvidia-smi and PyTorch count it), or bytes.
#pragma once

#include <optional>
#include <string>

namespace oomlab {

// The bytes `text` names, or nothing when it is not a number of 0 or more followed by one of
// the units above (or none). The caller checks the range it accepts.
std::optional<double> size_text_bytes(const std::string& text);

}  // namespace oomlab
