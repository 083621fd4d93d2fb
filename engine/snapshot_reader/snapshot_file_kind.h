// What kind of file a snapshot's reader was given, by its first bytes (snapshot_file_kind.cpp).
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace oomlab::snapshot {

// A profiler's trace: JSON, after any byte-order mark (UTF-8 or UTF-16 ones, which Windows
// editors add).
bool looks_like_json(const std::string& head);

// Throws BadInput naming `source` unless `head` begins a pickle of protocol 2 or later.
void refuse_unknown(const std::string& head, const std::string& source);

// A snapshot kept in another form than its pickle: saved as JSON, or inside memory_viz's web
// page. Its pickle, from the file's `head` and, where it is one of them, its `whole` text; none
// where it is neither.
std::optional<std::string> pickle_of_other_form(const std::string& head,
                                                const std::function<std::string()>& whole,
                                                const std::string& source);

}  // namespace oomlab::snapshot
