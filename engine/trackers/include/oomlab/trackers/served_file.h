// A file a server holds, read over HTTP: a lesson a lecturer serves to a class
// (`oomlab --lesson URL`, `oomlab-cli lesson run URL`).
#pragma once

#include <string>

namespace oomlab::trackers {

// Whether `text` is an http:// or https:// address rather than a name or a path.
bool is_http_url(const std::string& text);

// The body the server at `url` answers with. Throws BadInput naming the URL when it is not
// there (any status but 200) and Error when no whole answer came (refused, timed out); a busy
// server is asked again as a tracker is.
std::string fetch_served_file(const std::string& url);

}  // namespace oomlab::trackers
