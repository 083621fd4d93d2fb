// What a GloveTable holds. Plain views (pointers) over storage that is either owned (a parsed
// or synthetic table) or a read-only map of the cache file; the accessors never care which.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cache_source.h"
#include "memory_map.h"
#include "oomlab/glove/glove_table.h"

namespace oomlab {

struct GloveTable::Impl {
    // Views.
    std::int64_t rows = 0;  // visible rows (max_rows may hide the tail of a cached table)
    int dim = 0;
    const float* matrix = nullptr;                // rows x dim, row-major
    const std::uint64_t* word_offsets = nullptr;  // at least rows + 1 entries
    const char* word_bytes = nullptr;
    const std::uint64_t* index_slots = nullptr;
    std::uint64_t index_slot_count = 0;
    std::int64_t index_rows = 0;                    // rows the index covers (>= rows)
    const std::uint64_t* duplicate_rows = nullptr;  // ascending, all below index_rows
    std::int64_t duplicate_row_count = 0;           // entries in duplicate_rows
    std::int64_t duplicates = 0;                    // of them, those below rows
    // A cache's checksums of its vectors, a block of rows each (glove_cache.h); null otherwise.
    const std::uint64_t* vector_block_hashes = nullptr;

    GloveFormat format = GloveFormat::Glove;
    bool from_cache = false;
    std::string path;
    // The source text as it was when parsed, so a cache can tell when it is stale.
    glove_detail::CacheSource source;
    std::string note;  // e.g. a damaged cache was passed over

    // Storage (whichever applies).
    glove_detail::AnonymousRegion matrix_storage;
    std::vector<std::uint64_t> offsets_storage;
    std::vector<char> bytes_storage;
    std::vector<std::uint64_t> index_storage;
    std::vector<std::uint64_t> duplicates_storage;
    glove_detail::MappedFile cache_file;

    // Points the views at the owned vectors after they were filled.
    void use_owned_words_and_index();
};

}  // namespace oomlab
