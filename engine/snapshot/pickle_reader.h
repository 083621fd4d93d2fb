// A strict, bounded reader of Python pickles of plain data (protocols 2 to 5): dicts, lists,
// tuples, strings, integers, floats, booleans and None, with memo references, as PyTorch's
// memory snapshots hold. Anything else (a class, a REDUCE, bytes, a persistent id) is refused
// with the opcode and its offset: no class is looked up and no code runs. Containers nest at
// most 64 deep and are never filled after another container holds them, so what is read is a
// finite tree (shared where the pickle shares) that can be walked and freed without recursion
// past that depth.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace oomlab::snapshot {

struct PickleValue;
using PickleRef = std::shared_ptr<const PickleValue>;

struct PickleValue {
    struct None {};
    using List = std::vector<PickleRef>;  // lists and tuples
    using Dict = std::vector<std::pair<PickleRef, PickleRef>>;
    std::variant<None, bool, std::int64_t, double, std::string, List, Dict> value;
    int depth = 0;      // 0 for a scalar; a container's is 1 + its deepest item's
    bool held = false;  // in a container: the reader never fills it again

    bool is_none() const { return std::holds_alternative<None>(value); }
    const std::string* text() const { return std::get_if<std::string>(&value); }
    const List* list() const { return std::get_if<List>(&value); }
    const Dict* dict() const { return std::get_if<Dict>(&value); }
    // An integer (a bool counts as 0 or 1), or `otherwise`.
    std::int64_t integer(std::int64_t otherwise = 0) const;
    // The value at `key` of a dict with string keys; null when absent or not a dict.
    const PickleValue* at(std::string_view key) const;
};

inline constexpr int kMostPickleDepth = 64;

// Reads one pickle from `data`; throws BadInput naming `source`, the opcode and its offset.
PickleRef read_pickle(std::string_view data, const std::string& source);

}  // namespace oomlab::snapshot
