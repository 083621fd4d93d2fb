#include "oomlab/common/paths.h"

#include <cstdlib>
#include <filesystem>

namespace oomlab {
namespace {

std::string xdg_dir(const char* variable, const char* fallback_under_home) {
    if (const char* value = std::getenv(variable); value && *value) {
        return std::string(value) + "/oomlab";
    }
    const char* home = std::getenv("HOME");
    return std::string(home && *home ? home : ".") + "/" + fallback_under_home + "/oomlab";
}

}  // namespace

std::string user_data_dir() {
    return xdg_dir("XDG_DATA_HOME", ".local/share");
}
std::string user_cache_dir() {
    return xdg_dir("XDG_CACHE_HOME", ".cache");
}

std::string this_program_path() {
    std::error_code unreadable;
    std::string path = std::filesystem::read_symlink("/proc/self/exe", unreadable).string();
    return unreadable ? std::string() : path;
}

}  // namespace oomlab
