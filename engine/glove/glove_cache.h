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

#include "cache_source.h"
#include "table_impl.h"

namespace oomlab::glove_detail {

constexpr const char* kCacheSuffix = ".oomlab-cache";

// How a damaged cache is described (why_not starts with it).
constexpr const char* kDamaged = "damaged";

// Throws BadInput naming the file when it cannot be examined.
CacheSource stat_source(const std::string& path);

// True when the file starts with the cache's magic bytes.
bool looks_like_cache(const std::string& path);

// Writes atomically (a temporary file renamed over `path`). Throws Error on I/O failure.
void write_cache_file(const GloveTable::Impl& table, const std::string& path);

// A table viewing the mapped cache, or nullptr with `why_not` saying why it cannot be used:
// unreadable, damaged (header, sections or checksums), from another format version, or (when
// `source` is given) made from a different version of the text. The matrix's checksum costs
// a read of every vector, so it is checked only with `verify_matrix`.
std::shared_ptr<GloveTable::Impl> open_cache_file(const std::string& path,
                                                  const CacheSource* source, bool verify_matrix,
                                                  std::string& why_not);

}  // namespace oomlab::glove_detail
