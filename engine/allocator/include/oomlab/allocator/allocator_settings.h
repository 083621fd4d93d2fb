// PYTORCH_CUDA_ALLOC_CONF: the settings of PyTorch's CUDA caching allocator that change which
// segments it opens, in the variable's own syntax
// ("expandable_segments:True,max_split_size_mb:128").
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace oomlab::allocator {

struct AllocatorSettings {
    static constexpr std::int64_t kNoMaxSplit = std::numeric_limits<std::int64_t>::max();
    std::int64_t max_split_size = kNoMaxSplit;  // bytes; blocks this large are never split
    // Per size interval [2^i MiB, 2^(i+1) MiB), i = 0..15 (the last open-ended): requests
    // round up to one of this many steps of the interval; 0 or 1 rounds to 512 bytes.
    std::array<int, 16> roundup_power2_divisions{};
    double garbage_collection_threshold = 0.0;  // of the memory fraction; 0: off
    bool expandable_segments = false;

    bool operator==(const AllocatorSettings& other) const;
};

// Reads CONF; throws BadInput naming the key and what it accepts. Keys that do not change
// segments (pinned_*, release_lock_on_cudamalloc, backend, ...) are accepted and ignored.
AllocatorSettings parse_alloc_conf(std::string_view conf);

// What CONF sets that changes PyTorch's allocation but that the model does not replay, in
// words, one note each ("" for none): backend:cudaMallocAsync (CUDA's own allocator, not the
// caching one), per_process_memory_fraction (a cap the model takes from elsewhere). Text that
// parse_alloc_conf refuses has none.
std::vector<std::string> settings_not_replayed(std::string_view conf);

// Whether CONF turns expandable segments on; false for text parse_alloc_conf refuses (its
// error is reported where the setting is read).
bool expandable_segments_on(std::string_view conf);

// The settings in CONF's syntax, only those that differ from the defaults ("" for none).
std::string to_alloc_conf(const AllocatorSettings& settings);

}  // namespace oomlab::allocator
