// Per-user folders (XDG base directories), and where this program itself lies.
#pragma once

#include <string>

namespace oomlab {

std::string user_data_dir();   // $XDG_DATA_HOME/oomlab or ~/.local/share/oomlab
std::string user_cache_dir();  // $XDG_CACHE_HOME/oomlab or ~/.cache/oomlab

// The running program's own file (/proc/self/exe resolved: a program started through the
// link itself would be called "exe" in ps and nvidia-smi). Empty when it cannot be read.
std::string this_program_path();

}  // namespace oomlab
