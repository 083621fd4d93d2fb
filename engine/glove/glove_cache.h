// The binary cache: everything a loaded table holds, laid out so that loading is one
// read-only mmap. No parsing, no index building; only the header and the word offsets are
// checked, so a damaged or stale file is never trusted.
//
//   header (128 bytes) | pad to 4096 | matrix rows x dim float32 | word offsets (rows + 1) u64
//   | word bytes | pad to 64 | hash index slots u64 | duplicate rows u64
//
// Native byte order; a file written on a machine of the other order is simply not used.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "glove/table_impl.h"

namespace oomlab::glove_detail {

constexpr const char* kCacheSuffix = ".oomlab-cache";

// What identifies one version of a source text file.
struct CacheSource {
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0;
};

// Throws BadInput naming the file when it cannot be examined.
CacheSource stat_source(const std::string& path);

// True when the file starts with the cache's magic bytes.
bool looks_like_cache(const std::string& path);

// Writes atomically (a temporary file renamed over `path`). Throws Error on I/O failure.
void write_cache_file(const GloveTable::Impl& table, const std::string& path);

// A table viewing the mapped cache, or nullptr with `why_not` saying why it cannot be used:
// unreadable, damaged, from another format version, or (when `source` is given) made from a
// different version of the text.
std::shared_ptr<GloveTable::Impl> open_cache_file(const std::string& path,
                                                  const CacheSource* source, std::string& why_not);

}  // namespace oomlab::glove_detail
