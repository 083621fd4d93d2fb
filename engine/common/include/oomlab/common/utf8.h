// UTF-8 checks for text that ends up in JSON, the database and the workbench.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace oomlab {

// The offset of the first byte that does not belong to a valid UTF-8 sequence, or npos.
std::size_t invalid_utf8_offset(std::string_view text);

inline bool is_valid_utf8(std::string_view text) {
    return invalid_utf8_offset(text) == std::string_view::npos;
}

// `text` with every byte that is not part of a valid sequence replaced by U+FFFD, for text
// derived from something the user did not type as text (a file name becoming a run name).
std::string repaired_utf8(std::string_view text);

// Throws BadInput naming `what` (a key or an option) and the first bad byte; `advice` says
// what to do about it.
void require_utf8(std::string_view text, const std::string& what, std::string_view advice = {});

// `text` as one printable line: repaired_utf8, with each control character as '?' (C1 controls
// and the marks that turn text's direction too), for a label shown in a table (a file name, a
// name stored before names were checked).
std::string printable_line(std::string_view text);
// The same for prose of several lines (a lesson's explanation): its line breaks stay.
std::string printable_text(std::string_view text);

// `text` in double quotes for a message that echoes what the user gave: printable_line, and
// past 60 bytes cut (at a character's start) with its length said, so a value of megabytes
// does not become a message of megabytes.
std::string quoted_excerpt(std::string_view text);

// require_utf8 for a one-line label (a run's name, its tags): also refuses control
// characters (line breaks, tabs, escapes), which would break every table and list showing it.
void require_one_line(std::string_view text, const std::string& what);

}  // namespace oomlab
