// std::bit_cast before C++20: a value's bytes read as another type of the same size. Through
// memcpy, which compilers turn into a register move (and vectorise in loops).
#pragma once

#include <cstring>
#include <type_traits>

namespace oomlab {

template <typename To, typename From>
To bit_cast(const From& from) noexcept {
    static_assert(sizeof(To) == sizeof(From), "bit_cast between types of one size");
    static_assert(std::is_trivially_copyable_v<To> && std::is_trivially_copyable_v<From>,
                  "bit_cast of trivially copyable types");
    To to;
    std::memcpy(&to, &from, sizeof to);
    return to;
}

}  // namespace oomlab
