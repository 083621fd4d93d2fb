// A strict, bounded, streaming reader of Python pickles of plain data (protocols 2 to 5):
// dicts, lists, tuples, strings, integers, floats, booleans and None, with memo references, as
// PyTorch's memory snapshots hold. Anything else (a class, a REDUCE, bytes, a persistent id) is
// refused with the opcode and its offset: no class is looked up and no code runs.
//
// What is read costs what it holds, not what the file spells out: strings are interned, and a
// container equal to one read before (the same frame or stack of frames, written again for
// each event) becomes that one. So a snapshot whose events repeat their frames takes little
// more memory than one whose pickle shares them. Containers nest at most 64 deep and are never
// filled after another container holds them, so what is read is a finite, acyclic graph.
// A list of millions of records (a device's trace of events) may be given, item by item, to a
// PickleListSink instead, which keeps what it needs of each in a few dozen bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace oomlab::snapshot {

struct PickleContainer;

// One value: a scalar held here, or a string or container held by the PickleDocument that
// read it. Sixteen bytes, copied freely while the document lives.
class PickleValue {
public:
    // BigInt: a whole number outside 64 bits (torch.compile's frames carry a line of
    // 2**64-1); kept as what it is, not as its value, so it is never taken for a size.
    enum class Kind : std::uint8_t { None, Bool, Int, BigInt, Float, Text, List, Dict };

    static PickleValue of_bool(bool flag);
    static PickleValue of_int(std::int64_t number);
    static PickleValue of_big_int(bool negative);
    // A little-endian two's-complement whole number (LONG1, LONG4); a BigInt past 64 bits.
    static PickleValue of_little_endian(std::string_view bytes);
    static PickleValue of_float(double number);
    static PickleValue of_text(const std::string* text);
    static PickleValue of_container(const PickleContainer* container);

    Kind kind() const { return m_kind; }
    bool is_none() const { return m_kind == Kind::None; }
    const std::string* text() const {
        return m_kind == Kind::Text ? reinterpret_cast<const std::string*>(m_bits) : nullptr;
    }
    const PickleContainer* container() const {  // a list or a dict
        return m_kind == Kind::List || m_kind == Kind::Dict
                   ? reinterpret_cast<const PickleContainer*>(m_bits)
                   : nullptr;
    }
    const PickleContainer* list() const { return m_kind == Kind::List ? container() : nullptr; }
    const PickleContainer* dict() const { return m_kind == Kind::Dict ? container() : nullptr; }
    // An integer (a bool counts as 0 or 1), or `otherwise`.
    std::int64_t integer(std::int64_t otherwise = 0) const {
        return m_kind == Kind::Int || m_kind == Kind::Bool ? static_cast<std::int64_t>(m_bits)
                                                           : otherwise;
    }
    bool is_float() const { return m_kind == Kind::Float; }
    double real() const;  // a float's value; 0 for anything else
    // The value at `key` of a dict with string keys; null when absent or not a dict.
    const PickleValue* at(std::string_view key) const;
    // The same kind and the same payload: equal scalars, the same string or container.
    bool same(const PickleValue& other) const {
        return m_kind == other.m_kind && m_bits == other.m_bits;
    }
    std::uint64_t bits() const { return m_bits; }

private:
    Kind m_kind = Kind::None;
    std::uint64_t m_bits = 0;
};

struct PickleContainer {
    std::vector<PickleValue> items;  // a dict's keys and values alternate
    bool is_dict = false;

    std::size_t size() const { return is_dict ? items.size() / 2 : items.size(); }
    const PickleValue& key(std::size_t entry) const { return items[2 * entry]; }
    const PickleValue& value(std::size_t entry) const { return items[2 * entry + 1]; }

    // A large dict's keys (text) and the entry each names last, made on the first lookup: a
    // dict named from many places is looked up as often, and a scan of its keys each time
    // made reading quadratic.
    mutable std::unique_ptr<std::unordered_map<std::string_view, std::size_t>> key_index;

    // A list whose items a PickleListSink took as they were read (`items` keeps none of them):
    // its id there, and how many it took.
    std::uint32_t sink_list = 0;
    std::size_t taken = 0;

    // The reader's bookkeeping.
    int depth = 1;                       // 1 + its deepest item's
    bool held = false;                   // in another container: never filled again
    bool given = false;                  // held by a sink's list alone: dropped once unpinned
    std::uint32_t pins = 0;              // references from the reader's stack and memo
    std::int64_t memo_slot = -1;         // where the memo last put it
    std::uint32_t memo_entry = 0;        // its number in the memo, once memoized (PickleMemo)
    PickleContainer* same_as = nullptr;  // an equal container read before: this one is dropped
};

// The makers the reader calls for each value it reads, inline (PickleContainer is complete here).
inline PickleValue PickleValue::of_bool(bool flag) {
    PickleValue value;
    value.m_kind = Kind::Bool;
    value.m_bits = flag ? 1 : 0;
    return value;
}

inline PickleValue PickleValue::of_int(std::int64_t number) {
    PickleValue value;
    value.m_kind = Kind::Int;
    value.m_bits = static_cast<std::uint64_t>(number);
    return value;
}

inline PickleValue PickleValue::of_big_int(bool negative) {
    PickleValue value;
    value.m_kind = Kind::BigInt;
    value.m_bits = negative ? 1 : 0;
    return value;
}

inline PickleValue PickleValue::of_text(const std::string* text) {
    PickleValue value;
    value.m_kind = Kind::Text;
    value.m_bits = reinterpret_cast<std::uintptr_t>(text);
    return value;
}

inline PickleValue PickleValue::of_container(const PickleContainer* container) {
    PickleValue value;
    value.m_kind = container->is_dict ? Kind::Dict : Kind::List;
    value.m_bits = reinterpret_cast<std::uintptr_t>(container);
    return value;
}

// What read_pickle read: the root value, and everything it refers to.
class PickleDocument {
public:
    struct Storage;
    PickleDocument(std::unique_ptr<Storage> storage, PickleValue root);
    PickleDocument(PickleDocument&&) noexcept;
    PickleDocument& operator=(PickleDocument&&) noexcept;
    ~PickleDocument();

    const PickleValue& root() const { return m_root; }

private:
    std::unique_ptr<Storage> m_storage;
    PickleValue m_root;
};

inline constexpr int kMostPickleDepth = 64;

// Where a pickle's bytes come from, in order.
class PickleInput {
public:
    virtual ~PickleInput() = default;
    // Up to `most` bytes into `into`; 0 at the end. Throws BadInput when the source fails.
    virtual std::size_t read(char* into, std::size_t most) = 0;
    // The most bytes the whole input can hold, when known (a string longer is refused early).
    virtual std::uint64_t size_bound() const { return UINT64_MAX; }
};

// Takes the items of some lists as they are read: a list whose first item `begin_list` accepts
// gives that item and every later one to `take`, and keeps none of them. Such an item (a trace
// event's dict) is dropped once taken, and a memo reference to it later is refused.
class PickleListSink {
public:
    virtual ~PickleListSink() = default;
    // An id (not 0) for the list that `first` begins, when the sink takes it; else 0.
    virtual std::uint32_t begin_list(const PickleValue& first) = 0;
    // Item `index` of the list numbered `list`; `item` lives only during the call.
    virtual void take(std::uint32_t list, std::size_t index, const PickleValue& item) = 0;
    // What the sink keeps, counted with what the reader keeps.
    virtual std::uint64_t bytes() const = 0;
};

// Reads one pickle from `input`, a megabyte at a time; `after_chunk` (optional) is called
// after each, and may throw (Cancelled) to stop; `sink` (optional) takes the lists it chooses.
// Throws BadInput naming `source`, the opcode and its offset.
PickleDocument read_pickle(PickleInput& input, const std::string& source,
                           const std::function<void()>& after_chunk = {},
                           PickleListSink* sink = nullptr);
PickleDocument read_pickle(std::string_view data, const std::string& source,
                           PickleListSink* sink = nullptr);

}  // namespace oomlab::snapshot
