// The pickle reader's memo entries: eight bytes each (a file has one for nearly every string
// and container it holds), a tagged pointer to a string, a container or a stored scalar; 0 for
// none, kMemoGiven for an item given to a PickleListSink (read and dropped).
#pragma once

#include <cstdint>
#include <string>

#include "pickle_reader.h"

namespace oomlab::snapshot {

enum MemoTag : std::uintptr_t { kMemoText = 1, kMemoContainer = 2, kMemoScalar = 3 };
inline constexpr std::uintptr_t kMemoGiven = 4;

// The entry of a string or a container; 0 for a scalar, which the reader stores first.
inline std::uintptr_t memo_pointer_entry(const PickleValue& value) {
    if (const std::string* text = value.text()) {
        return reinterpret_cast<std::uintptr_t>(text) | kMemoText;
    }
    if (const PickleContainer* container = value.container()) {
        return reinterpret_cast<std::uintptr_t>(container) | kMemoContainer;
    }
    return 0;
}

inline std::uintptr_t memo_scalar_entry(const PickleValue* stored) {
    return reinterpret_cast<std::uintptr_t>(stored) | kMemoScalar;
}

inline PickleValue memo_value(std::uintptr_t entry) {
    const std::uintptr_t pointer = entry & ~std::uintptr_t(3);
    switch (entry & 3) {
        case kMemoText:
            return PickleValue::of_text(reinterpret_cast<const std::string*>(pointer));
        case kMemoContainer:
            return PickleValue::of_container(reinterpret_cast<const PickleContainer*>(pointer));
        case kMemoScalar:
            return *reinterpret_cast<const PickleValue*>(pointer);
        default:
            return {};
    }
}

}  // namespace oomlab::snapshot
