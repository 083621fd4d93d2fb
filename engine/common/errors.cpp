#include "oomlab/common/errors.h"

namespace oomlab {

BadInput bad_input_at(const std::string& path, std::size_t line, const std::string& what) {
    std::string where = path;
    if (line > 0) {
        where += ":" + std::to_string(line);
    }
    return BadInput(where + ": " + what);
}

}  // namespace oomlab
