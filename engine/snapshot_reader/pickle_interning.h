// How the pickle reader tells a string or a container it has kept before: hashes and
// equality of content, for its PointerSets, and which containers are worth looking up.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "pickle_reader.h"

namespace oomlab::snapshot {

inline std::uint64_t mix_hash(std::uint64_t hash, std::uint64_t value) {
    return (hash ^ value) * 0x9E3779B97F4A7C15ull + (hash >> 29);
}

// A distinct string the reader keeps, and its memo entry once memoized.
struct StoredText {
    explicit StoredText(std::string_view bytes) : text(bytes) {}
    std::string text;
    std::uint32_t memo_entry = 0;
};

struct SameText {
    std::size_t operator()(std::string_view text) const {
        return std::hash<std::string_view>{}(text);
    }
    bool operator()(std::string_view text, const StoredText* kept) const {
        return kept->text == text;
    }
};

struct SameContent {
    std::size_t operator()(const PickleContainer* container) const {
        std::uint64_t hash = container->is_dict ? 1 : 2;
        for (const PickleValue& item : container->items) {  // one step an item: stacks are long
            hash = mix_hash(hash, item.bits() ^ (std::uint64_t(item.kind()) << 56));
        }
        return std::size_t(hash);
    }
    bool operator()(const PickleContainer* a, const PickleContainer* b) const {
        return a->is_dict == b->is_dict &&
               std::equal(a->items.begin(), a->items.end(), b->items.begin(), b->items.end(),
                          [](const PickleValue& x, const PickleValue& y) { return x.same(y); });
    }
};

// What repeats in a snapshot is text and what is made of it: frames (a name, a file, a
// line) and stacks of them. A record with an address or a size in it (an event, a block)
// is one of a kind, and looking it up would only cost time; so is a list a sink took.
inline bool may_repeat(const PickleContainer& container) {
    constexpr std::int64_t kLargestLine = std::int64_t(1) << 20;
    return container.sink_list == 0 &&
           std::all_of(container.items.begin(), container.items.end(), [](const PickleValue& item) {
               return item.kind() != PickleValue::Kind::Int ||
                      (item.integer() >= -kLargestLine && item.integer() <= kLargestLine);
           });
}

}  // namespace oomlab::snapshot
