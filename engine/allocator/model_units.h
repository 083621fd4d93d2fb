// Sizes the caching allocator's model rounds to, shared by its files.
#pragma once

#include <cstdint>

#include "oomlab/allocator/caching_allocator_model.h"

namespace oomlab::allocator {

inline std::int64_t round_up(std::int64_t value, std::int64_t step) {
    return (value + step - 1) / step * step;
}

// An expandable segment maps pages of its pool's segment size.
inline std::int64_t page_of(bool small) {
    return small ? kSmallBuffer : kLargeBuffer;
}

}  // namespace oomlab::allocator
