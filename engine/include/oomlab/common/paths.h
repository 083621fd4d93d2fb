// Per-user folders (XDG base directories) and small file helpers shared by the engine.
#pragma once

#include <string>

namespace oomlab {

std::string user_data_dir();   // $XDG_DATA_HOME/oomlab or ~/.local/share/oomlab
std::string user_cache_dir();  // $XDG_CACHE_HOME/oomlab or ~/.cache/oomlab

// Reads a whole file; throws BadInput naming the file when it cannot be read.
std::string read_file(const std::string& path);

}  // namespace oomlab
