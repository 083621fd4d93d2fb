// What identifies one version of a GloVe text file, recorded in its cache.
#pragma once

#include <cstdint>

namespace oomlab::glove_detail {

struct CacheSource {
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0;
    std::int64_t ctime_ns = 0;  // set by the kernel on every change, so it cannot be put back
    std::uint64_t inode = 0;
};

}  // namespace oomlab::glove_detail
