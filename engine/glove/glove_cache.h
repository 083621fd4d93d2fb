// The binary cache: everything a loaded table holds, laid out so that loading is one
// read-only mmap. No parsing, no index building; only the header and the word offsets are
// checked, so a damaged or stale file is never trusted.
//
//   header (128 bytes) | pad to 4096 | matrix rows x dim float32 | word offsets (rows + 1) u64
//   | word bytes | pad to 64 | hash index slots u64 | duplicate rows u64
//   | a checksum per kVectorBlockRows rows of the matrix u64
//
// Native byte order; a file written on a machine of the other order is simply not used.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

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

// The vectors are checked in blocks of this many rows, each against its own checksum, so a
// run that uses a few thousand rows of 840B's 2.2 million reads those blocks alone.
constexpr std::uint64_t kVectorBlockRows = 4096;

// A table viewing the mapped cache, or nullptr with `why_not` saying why it cannot be used:
// unreadable, damaged (header, sections or checksums), from another format version, or (when
// `source` is given) made from a different version of the text. The vectors are not read:
// damaged_vectors checks those a caller uses.
std::shared_ptr<GloveTable::Impl> open_cache_file(const std::string& path,
                                                  const CacheSource* source, std::string& why_not);

// Empty when the vectors of `blocks` (row / kVectorBlockRows) match their checksums (or the
// table was not read from a cache); else why not, naming the rows, starting with kDamaged.
std::string damaged_vectors(const GloveTable::Impl& table, std::vector<std::uint64_t> blocks);

}  // namespace oomlab::glove_detail
