#include "oomlab/common/errors.h"

namespace oomlab {

BadInput::~BadInput() = default;

BadInput bad_input_at(const std::string& path, std::size_t line, const std::string& what,
                      std::vector<std::string> keys) {
    std::string where = path;
    if (line > 0) {
        where += ":" + std::to_string(line);
    }
    return BadInput(where + ": " + what, std::move(keys));
}

}  // namespace oomlab
