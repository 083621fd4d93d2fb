// Per-user folders (XDG base directories).
#pragma once

#include <string>

namespace oomlab {

std::string user_data_dir();   // $XDG_DATA_HOME/oomlab or ~/.local/share/oomlab
std::string user_cache_dir();  // $XDG_CACHE_HOME/oomlab or ~/.cache/oomlab

}  // namespace oomlab
