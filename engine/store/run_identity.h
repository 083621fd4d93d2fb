// A run's identity: 128 random bits, unique across databases, by which the other ranks of a
// data-parallel run join the run rank 0 created (never by its number alone).
#pragma once

#include <string>

namespace oomlab::store {

// 32 hex digits from the system's random source.
std::string new_run_uid();

}  // namespace oomlab::store
