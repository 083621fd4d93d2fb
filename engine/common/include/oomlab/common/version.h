#pragma once

#include <string>

namespace oomlab {

// The engine's own version ("0.1.0").
std::string engine_version();

}  // namespace oomlab
