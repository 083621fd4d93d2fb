// How byte counts read in messages: "12.3 MiB", or "1.50 GiB" from a GiB up.
#pragma once

#include <cstdint>
#include <string>

namespace oomlab {

std::string format_bytes(std::int64_t bytes);

}  // namespace oomlab
