// Timestamps as the run store writes them: ISO 8601, UTC, milliseconds
// ("2024-05-01T12:34:56.789Z"), so they sort as text and read the same on every machine.
#pragma once

#include <chrono>
#include <string>

namespace oomlab::store {

std::string iso8601_utc(std::chrono::system_clock::time_point time);
std::string utc_now();

}  // namespace oomlab::store
