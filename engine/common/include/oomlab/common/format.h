// How numbers read in messages, on the terminal and in the workbench: one spelling for all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace oomlab {

inline constexpr std::int64_t kBytesPerMiB = std::int64_t{1} << 20;
// More than any device holds (1 PiB): a size or a figure past it read from outside is no
// measurement.
inline constexpr std::int64_t kMostDeviceBytes = std::int64_t{1} << 50;

// "512 B", "12.3 KiB", "45.6 MiB", "1.50 GiB".
std::string format_bytes(std::int64_t bytes);

// "1 run", "30 runs": a count and its noun (`one`), in English's regular plural.
std::string counted(std::size_t count, const std::string& one);

// "0.09 s", "4.2 s", "42 s", "3 min 07 s", "2 h 05 min"; "—" when unknown (negative).
std::string format_duration(double seconds);

}  // namespace oomlab
