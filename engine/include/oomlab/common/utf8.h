// UTF-8 checks for text that ends up in JSON, the database and the workbench.
#pragma once

#include <cstddef>
#include <string_view>

namespace oomlab {

// The offset of the first byte that does not belong to a valid UTF-8 sequence, or npos.
std::size_t invalid_utf8_offset(std::string_view text);

inline bool is_valid_utf8(std::string_view text) {
    return invalid_utf8_offset(text) == std::string_view::npos;
}

}  // namespace oomlab
