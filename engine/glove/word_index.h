// The word -> row hash index. It is stored verbatim in the cache file, so its layout and hash
// function are part of the cache format: change either and bump kCacheVersion.
//
// Open addressing with linear probing over a power-of-two table. A slot holds the upper 32
// bits of the word's hash (to skip most string compares) and row + 1 (0 marks an empty slot).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace oomlab::glove_detail {

std::uint64_t word_hash(std::string_view word);

// A checksum of a block of bytes (the cache's sections), fast enough for a few hundred MiB:
// four independent lanes of the same mix as word_hash.
std::uint64_t content_hash(const void* data, std::uint64_t bytes, std::uint64_t seed = 0);

// A power of two at least twice `rows` (load factor <= 0.5 keeps probes short).
std::uint64_t index_slot_count(std::int64_t rows);

struct WordIndex {
    std::vector<std::uint64_t> slots;
    std::vector<std::uint64_t> duplicate_rows;  // ascending: rows whose word appeared earlier
};

// Indexes rows [0, rows); `offsets` has rows + 1 entries into `bytes`.
WordIndex build_word_index(const std::uint64_t* offsets, const char* bytes, std::int64_t rows);

// The first row holding `word`, or -1. Rows at or past `visible_rows` count as absent (a
// table loaded with max_rows shares the full table's index).
std::int64_t find_word(const std::uint64_t* slots, std::uint64_t slot_count,
                       const std::uint64_t* offsets, const char* bytes, std::int64_t visible_rows,
                       std::string_view word);

}  // namespace oomlab::glove_detail
