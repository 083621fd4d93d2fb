#include "oomlab/common/paths.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "oomlab/common/errors.h"

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

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw bad_input_at(path, 0, std::string("cannot open: ") + std::strerror(errno));
    }
    std::ostringstream content;
    content << in.rdbuf();
    return content.str();
}

}  // namespace oomlab
