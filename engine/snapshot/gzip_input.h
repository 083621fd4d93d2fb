// Snapshots kept gzipped (x.pickle.gz, as large ones often are), read without unpacking them
// to a file first.
#pragma once

#include <cstddef>
#include <string>

namespace oomlab::snapshot {

bool is_gzip(const std::string& bytes);  // starts with gzip's magic number

// The decompressed bytes; throws BadInput naming `source` when they are corrupt or would pass
// `most` bytes.
std::string gunzip(const std::string& bytes, std::size_t most, const std::string& source);

}  // namespace oomlab::snapshot
